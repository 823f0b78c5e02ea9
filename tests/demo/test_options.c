/*
 * The demos' command line (demos/common/options.c): what good flags set,
 * and that every bad flag or value gives exit status 2 with a message that
 * names it, followed by the usage, on the error stream only.
 */
#include "cugl_test.h"

#include "options.h"

static const demo_info with_vertices = {
    .program = "cugl-test",
    .name = "test",
    .summary = "A demo for the tests.",
    .controls = "  Escape  quit\n",
    .view = "x,y: the test's view,\nin two lines",
    .dump_vertices = true,
    .multi_device = true,
};

static const demo_info without_vertices = {
    .program = "cugl-test",
    .name = "test",
    .summary = "A demo for the tests.",
};

/* A demo with flags of its own: --count N (1 to 100) and --fast. */
static long count_value;
static bool fast_value;

static const char *parse_count(const char *value, void *user)
{
    return demo_parse_long(value, 1, 100, (long *)user) ? NULL : "is not a number from 1 to 100";
}

static const char *parse_fast(const char *value, void *user)
{
    (void)value;
    *(bool *)user = true;
    return NULL;
}

static const demo_flag extra_flags[] = {
    {"--count", "N", "how many things (default 10)", parse_count, &count_value},
    {"--fast", NULL, "go fast", parse_fast, &fast_value},
    {0},
};

static const demo_info with_extras = {
    .program = "cugl-test",
    .name = "test",
    .summary = "A demo for the tests.",
    .extra = extra_flags,
};

/* A demo that takes --mpi: options.c only asks whether it has the ranks' code. */
static const char mpi_code;
static const demo_info with_mpi = {
    .program = "cugl-test",
    .name = "test",
    .summary = "A demo for the tests.",
    .extra = extra_flags,
    .mpi = (const struct demo_mpi_backend *)(const void *)&mpi_code,
};

enum { MAX_ARGS = 16 };

typedef struct parsed {
    int rc;
    demo_options opt;
    char *out, *err; /* what went to each stream */
} parsed;

/* Parse `args` (NULL-terminated, without the program name). */
static parsed parse(const demo_info *info, const char *const *args)
{
    char *argv[MAX_ARGS + 2] = {"cugl-test"};
    int argc = 1;
    for (; args[argc - 1]; argc++) {
        assert_true(argc <= MAX_ARGS);
        argv[argc] = (char *)args[argc - 1];
    }
    parsed p = {0};
    size_t out_len = 0, err_len = 0;
    FILE *out = open_memstream(&p.out, &out_len), *err = open_memstream(&p.err, &err_len);
    assert_non_null(out);
    assert_non_null(err);
    p.rc = demo_options_parse(&p.opt, info, argc, argv, out, err);
    fclose(out);
    fclose(err);
    return p;
}

static void parsed_free(parsed *p)
{
    free(p->out);
    free(p->err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void defaults(void **state)
{
    (void)state;
    parsed p = parse(&with_vertices, (const char *const[]){NULL});
    assert_int_equal(p.rc, DEMO_RUN);
    assert_false(p.opt.headless);
    assert_int_equal(p.opt.width, 0);
    assert_int_equal(p.opt.height, 0);
    assert_int_equal(p.opt.frames, 0);
    assert_null(p.opt.screenshot);
    assert_int_equal(p.opt.interop, CUGL_APP_INTEROP_AUTO);
    assert_false(p.opt.bench);
    assert_int_equal(p.opt.soak, 0);
    assert_int_equal(p.opt.device, 0);
    assert_int_equal(p.opt.compute_count, 0);
    assert_null(p.opt.dump_vertices);
    assert_null(p.opt.record);
    assert_null(p.opt.input);
    assert_null(p.opt.save_input);
    assert_string_equal(p.out, "");
    assert_string_equal(p.err, "");
    parsed_free(&p);
}

static void every_flag(void **state)
{
    (void)state;
    parsed p = parse(&with_vertices,
                     ARGS("--headless", "--size", "256x128", "--frames", "3", "--screenshot",
                          "x.png", "--interop", "shared", "--bench", "--soak", "10000"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_true(p.opt.headless);
    assert_int_equal(p.opt.width, 256);
    assert_int_equal(p.opt.height, 128);
    assert_int_equal(p.opt.frames, 3);
    assert_string_equal(p.opt.screenshot, "x.png");
    assert_int_equal(p.opt.interop, CUGL_APP_INTEROP_SHARED);
    
    assert_true(p.opt.bench);
    assert_int_equal(p.opt.soak, 10000);
    assert_string_equal(p.err, "");
    parsed_free(&p);

    p = parse(&with_vertices, ARGS("--interop", "map", "--input", "in.txt", "--save-input",
                                   "out.txt", "--interop", "auto"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.interop, CUGL_APP_INTEROP_AUTO);
    assert_string_equal(p.opt.input, "in.txt");
    assert_string_equal(p.opt.save_input, "out.txt");
    assert_int_equal(p.opt.view_count, 0);
    assert_false(p.opt.ui);
    parsed_free(&p);

    p = parse(&with_vertices, ARGS("--ui", "--headless"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_true(p.opt.ui);
    parsed_free(&p);

    p = parse(&with_vertices, ARGS("--view", "0.5,-0.25,6.2,1e-3,0,-2", "--view=7"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.view_count, 1); /* the last one given */
    assert_true(p.opt.view[0] == 7.0f);
    parsed_free(&p);
    p = parse(&with_vertices, ARGS("--view", "0.5,-0.25,6.2,1e-3,0,-2,3,4"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.view_count, 8);
    assert_true(p.opt.view[0] == 0.5f && p.opt.view[1] == -0.25f && p.opt.view[2] == 6.2f &&
                p.opt.view[3] == 1e-3f && p.opt.view[7] == 4.0f);
    parsed_free(&p);

    p = parse(&with_vertices, ARGS("--device", "1", "--dump-vertices", "v.bin", "--interop",
                                   "host", "--size", "16384x1", "--record", "frames"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.device, 1);
    assert_string_equal(p.opt.dump_vertices, "v.bin");
    assert_int_equal(p.opt.interop, CUGL_APP_INTEROP_HOST);
    assert_int_equal(p.opt.width, 16384);
    assert_int_equal(p.opt.height, 1);
    assert_string_equal(p.opt.record, "frames");
    assert_int_equal(p.opt.record_codec, 0);
    assert_int_equal(p.opt.record_kbps, 0);
    parsed_free(&p);

    /* The codec by name, in cugl_app_record_codec's values; the bitrate. */
    static const char *const codecs[] = {"h264", "vp8", "vp9"};
    for (int k = 0; k < 3; k++) {
        p = parse(&with_vertices, ARGS("--record", "run.WEBM", "--record-codec", codecs[k],
                                       "--record-kbps", "1000000"));
        assert_int_equal(p.rc, DEMO_RUN);
        assert_int_equal(p.opt.record_codec, k + 1);
        assert_int_equal(p.opt.record_kbps, 1000000);
        parsed_free(&p);
    }
}

static void check_bad(const demo_info *info, const char *const *args, const char *mentions);

static void a_demos_own_flags(void **state)
{
    (void)state;
    count_value = 0;
    fast_value = false;
    parsed p = parse(&with_extras, ARGS("--count", "42", "--headless", "--fast"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(count_value, 42);
    assert_true(fast_value);
    assert_true(p.opt.headless);
    parsed_free(&p);
    p = parse(&with_extras, ARGS("--count=7"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(count_value, 7);
    parsed_free(&p);
    p = parse(&with_extras, ARGS("--help"));
    assert_non_null(strstr(p.out, "  --count N              how many things (default 10)\n"));
    assert_non_null(strstr(p.out, "  --fast                 go fast\n"));
    parsed_free(&p);
    check_bad(&with_extras, ARGS("--count", "0"), "--count: '0' is not a number from 1 to 100");
    check_bad(&with_extras, ARGS("--count", "x"), "--count: 'x' is not a number from 1 to 100");
    check_bad(&with_extras, ARGS("--count"), "--count needs a value: N");
    check_bad(&with_extras, ARGS("--fast=1"), "--fast takes no value (got '1')");
    /* Another demo does not know them. */
    check_bad(&with_vertices, ARGS("--count", "3"), "unknown option '--count'");
    assert_false(demo_parse_long(NULL, 0, 1, &count_value));
}

static void values_after_equals(void **state)
{
    (void)state;
    parsed p = parse(&with_vertices, ARGS("--size=640x480", "--frames=10", "--interop=host",
                                          "--device=2", "--screenshot=a.png"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.width, 640);
    assert_int_equal(p.opt.height, 480);
    assert_int_equal(p.opt.frames, 10);
    assert_int_equal(p.opt.interop, CUGL_APP_INTEROP_HOST);
    assert_int_equal(p.opt.device, 2);
    assert_string_equal(p.opt.screenshot, "a.png");
    parsed_free(&p);
}

static void the_last_of_a_flag_wins(void **state)
{
    (void)state;
    parsed p = parse(&with_vertices, ARGS("--interop", "host", "--interop", "map", "--frames",
                                          "7", "--frames", "9"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.interop, CUGL_APP_INTEROP_MAP);
    assert_int_equal(p.opt.frames, 9);
    parsed_free(&p);
}

static void help_goes_to_out(void **state)
{
    (void)state;
    const char *const *cases[] = {ARGS("--help"), ARGS("-h"), ARGS("--frames", "3", "--help")};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parsed p = parse(&with_vertices, cases[i]);
        assert_int_equal(p.rc, 0);
        assert_string_equal(p.err, "");
        assert_non_null(strstr(p.out, "usage: cugl-test [options]"));
        assert_non_null(strstr(p.out, "A demo for the tests."));
        for (const char *const *flag = ARGS("--headless", "--size", "--frames", "--screenshot",
                                            "--interop", "--bench", "--soak", "--device",
                                            "--dump-vertices", "--record", "--help",
                                            "Escape  quit");
             *flag; flag++)
            if (!strstr(p.out, *flag))
                fail_msg("the usage lacks %s:\n%s", *flag, p.out);
        parsed_free(&p);
    }
    parsed p = parse(&without_vertices, ARGS("--help"));
    assert_null(strstr(p.out, "--dump-vertices"));
    parsed_free(&p);
}

/* A bad command line and the text the first line of the message must hold. */
typedef struct bad_case {
    const char *args[6];
    const char *mentions;
} bad_case;

static const bad_case bad_cases[] = {
    {{"--size", "0x5"}, "--size: '0x5' is not WIDTHxHEIGHT"},
    {{"--size", "5x0"}, "--size: '5x0'"},
    {{"--size", "abc"}, "--size: 'abc'"},
    {{"--size", "10x"}, "--size: '10x'"},
    {{"--size", "x10"}, "--size: 'x10'"},
    {{"--size", "10"}, "--size: '10'"},
    {{"--size", "5x5x5"}, "--size: '5x5x5'"},
    {{"--size", "-5x5"}, "--size: '-5x5'"},
    {{"--size", " 5x5"}, "--size: ' 5x5'"},
    {{"--size", "16385x8"}, "--size: '16385x8'"},
    {{"--size", "99999999999999999999x1"}, "--size: '99999999999999999999x1'"},
    {{"--size=0x5"}, "--size: '0x5'"},
    {{"--frames", "-1"}, "--frames: '-1' is not a number from 1 to"},
    {{"--frames", "0"}, "--frames: '0'"},
    {{"--frames", "abc"}, "--frames: 'abc'"},
    {{"--frames", "1e3"}, "--frames: '1e3'"},
    {{"--frames", "3.5"}, "--frames: '3.5'"},
    {{"--frames", "99999999999"}, "--frames: '99999999999'"},
    {{"--frames="}, "--frames: ''"},
    {{"--soak", "0"}, "--soak: '0' is not a number from 1 to"},
    {{"--soak", "-5"}, "--soak: '-5'"},
    {{"--soak", "x"}, "--soak: 'x'"},
    {{"--soak"}, "--soak needs a value: N"},
    {{"--device", "-1"}, "--device: '-1'"},
    {{"--device", "one"}, "--device: 'one'"},
    {{"--compute-device", "-1"}, "--compute-device: '-1' is not a device ordinal (0 to 1023)"},
    {{"--compute-device", "1024"}, "--compute-device: '1024'"},
    {{"--compute-device", "0,1"}, "--compute-device: '0,1'"},
    {{"--compute-device"}, "--compute-device needs a value: N"},
    {{"--devices", "0,0"}, "--devices: '0,0' is not 1 to 16 different device ordinals (0 to "
                           "1023) separated by commas"},
    {{"--devices", "0,,1"}, "--devices: '0,,1'"},
    {{"--devices", "0,1,"}, "--devices: '0,1,'"},
    {{"--devices", ",1"}, "--devices: ',1'"},
    {{"--devices", "1;2"}, "--devices: '1;2'"},
    {{"--devices", "0,1024"}, "--devices: '0,1024'"},
    {{"--devices", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"}, "--devices: '0,1,2,3,4,5,6,7,8,9"},
    {{"--devices="}, "--devices: ''"},
    {{"--devices", "0,1", "--compute-device", "1"},
     "--compute-device: the compute devices were given already"},
    {{"--compute-device", "1", "--devices", "1"}, "--devices: the compute devices were given"},
    {{"--interop", "bogus"}, "--interop: 'bogus' is not auto, map, shared or host"},
    {{"--interop", "AUTO"}, "--interop: 'AUTO'"},
    {{"--view", "1,,2"}, "--view: '1,,2' is not 1 to 8 numbers separated by commas"},
    {{"--view", "1;2"}, "--view: '1;2'"},
    {{"--view", "nan"}, "--view: 'nan'"},
    {{"--view", "1e39"}, "--view: '1e39'"},
    {{"--view", "1,"}, "--view: '1,'"},
    {{"--view", "1,2,3,4,5,6,7,8,9"}, "--view: '1,2,3,4,5,6,7,8,9'"},
    {{"--view"}, "--view needs a value: V1,V2,..."},
    {{"--ui=yes"}, "--ui takes no value (got 'yes')"},
    {{"--interop", "MAP"}, "--interop: 'MAP'"},
    {{"--interop="}, "--interop: ''"},
    {{"--bogus"}, "unknown option '--bogus'"},
    {{"--bogus=3"}, "unknown option '--bogus'"},
    {{"--headles"}, "unknown option '--headles'"},
    {{"-x"}, "unexpected argument '-x'"},
    {{"julia.png"}, "unexpected argument 'julia.png'"},
    {{"--size"}, "--size needs a value: WIDTHxHEIGHT"},
    {{"--frames"}, "--frames needs a value: N"},
    {{"--screenshot"}, "--screenshot needs a value: FILE"},
    {{"--interop"}, "--interop needs a value: auto|map|shared|host"},
    {{"--input"}, "--input needs a value: FILE"},
    {{"--input="}, "--input needs a file name"},
    {{"--save-input"}, "--save-input needs a value: FILE"},
    {{"--save-input="}, "--save-input needs a file name"},
    {{"--device"}, "--device needs a value: N"},
    {{"--dump-vertices"}, "--dump-vertices needs a value: FILE"},
    {{"--record"}, "--record needs a value: DIR"},
    {{"--record="}, "--record needs a folder name"},
    {{"--record", "a.webm", "--record-codec", "av1"}, "--record-codec: 'av1' is not h264, vp8"},
    {{"--record", "a.webm", "--record-codec", ""}, "--record-codec: '' is not"},
    {{"--record", "a.mp4", "--record-kbps", "0"}, "--record-kbps: '0' is not a number from 1"},
    {{"--record", "a.mp4", "--record-kbps", "1000001"}, "--record-kbps: '1000001'"},
    {{"--record", "a.mp4", "--record-kbps", "5k"}, "--record-kbps: '5k'"},
    {{"--record-codec", "vp9"}, "--record-codec and --record-kbps are for --record FILE"},
    {{"--record", "frames", "--record-kbps", "900"}, "not a folder of PNG files"},
    {{"--size", "--headless"}, "--size needs a value"},
    {{"--screenshot", "--frames", "3"}, "--screenshot needs a value"},
    {{"--screenshot="}, "--screenshot needs a file name"},
    {{"--headless=yes"}, "--headless takes no value (got 'yes')"},
    {{"--bench="}, "--bench takes no value"},
    {{"--headless", "--frames", "2", "--interop", "nope"}, "--interop: 'nope'"},
};

static void check_bad(const demo_info *info, const char *const *args, const char *mentions)
{
    parsed p = parse(info, args);
    if (p.rc != DEMO_EXIT_USAGE)
        fail_msg("%s ...: returned %d, expected %d", args[0], p.rc, DEMO_EXIT_USAGE);
    assert_string_equal(p.out, "");
    /* One line naming the problem, a blank line, then the usage. */
    char *nl = strchr(p.err, '\n');
    assert_non_null(nl);
    *nl = '\0';
    if (strncmp(p.err, "cugl-test: ", 11) != 0 || !strstr(p.err, mentions))
        fail_msg("message \"%s\" does not mention \"%s\"", p.err, mentions);
    if (strncmp(nl + 1, "\nusage: cugl-test [options]\n", 28) != 0)
        fail_msg("no usage after the message for %s", args[0]);
    parsed_free(&p);
}

static void bad_flags_exit_2(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        check_bad(&with_vertices, bad_cases[i].args, bad_cases[i].mentions);
}

/* A demo that draws no vertices does not know --dump-vertices, one that
 * does not split its work --devices, one without a view --view. */
static void flags_of_other_demos_are_unknown(void **state)
{
    (void)state;
    check_bad(&without_vertices, ARGS("--dump-vertices", "v.bin"),
              "unknown option '--dump-vertices'");
    check_bad(&without_vertices, ARGS("--devices", "0,1"), "unknown option '--devices'");
    check_bad(&without_vertices, ARGS("--view", "1,2,3"), "unknown option '--view'");
    parsed p = parse(&without_vertices, ARGS("--help"));
    assert_null(strstr(p.out, "--devices"));
    assert_null(strstr(p.out, "--view"));
    assert_non_null(strstr(p.out, "--compute-device N"));
    parsed_free(&p);
}

/* The usage is the demo's own: its view's numbers, line by line, and the
 * parts of libcugl-app its build lacks. */
static void usage_is_the_demos_own(void **state)
{
    (void)state;
    parsed p = parse(&with_vertices, ARGS("--help"));
    assert_non_null(strstr(p.out, "  --view V1,V2,...       start from this view (printed at "
                                  "exit after --input):\n"
                                  "                         x,y: the test's view,\n"
                                  "                         in two lines\n"));
    assert_null(strstr(p.out, "not in this build"));
    parsed_free(&p);

    demo_info lacking = with_vertices;
    lacking.without_ui = true;
    p = parse(&lacking, ARGS("--help"));
    assert_non_null(strstr(p.out, "(not in this build: the panel needs Debian's\n"));
    assert_null(strstr(p.out, "the frame server needs"));
    parsed_free(&p);

    lacking = with_vertices;
    lacking.without_serve = true;
    p = parse(&lacking, ARGS("--help"));
    assert_null(strstr(p.out, "the panel needs"));
    assert_non_null(strstr(p.out, "(not in this build: the frame server needs\n"));
    parsed_free(&p);
}

/* --compute-device N, or --devices with up to DEMO_MAX_DEVICES ordinals. */
static void compute_devices(void **state)
{
    (void)state;
    parsed p = parse(&without_vertices, ARGS("--device", "1", "--compute-device", "0"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.device, 1);
    assert_int_equal(p.opt.compute_count, 1);
    assert_int_equal(p.opt.compute[0], 0);
    parsed_free(&p);

    p = parse(&with_vertices, ARGS("--devices=3,0,1023"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.compute_count, 3);
    assert_int_equal(p.opt.compute[0], 3);
    assert_int_equal(p.opt.compute[1], 0);
    assert_int_equal(p.opt.compute[2], 1023);
    parsed_free(&p);

    p = parse(&with_vertices, ARGS("--devices", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_int_equal(p.opt.compute_count, DEMO_MAX_DEVICES);
    assert_int_equal(p.opt.compute[15], 15);
    assert_string_equal(p.err, "");
    parsed_free(&p);
}

/* --mpi and --mpi-timeout, for the demos that take them; the values of a
 * demo's own flags kept for the ranks to compare; --device given or not. */
static void mpi_flags(void **state)
{
    (void)state;
    parsed p = parse(&with_mpi, ARGS("--mpi", "--mpi-timeout", "2.5", "--count", "9", "--fast",
                                     "--device", "0"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_true(p.opt.mpi);
    assert_true(p.opt.mpi_timeout == 2.5);
    assert_string_equal(p.opt.extra_values[0], "9");
    assert_string_equal(p.opt.extra_values[1], "");
    assert_null(p.opt.extra_values[2]);
    assert_true(p.opt.device_given);
    assert_int_equal(p.opt.device, 0);
    parsed_free(&p);

    p = parse(&with_mpi, ARGS("--frames", "2", "--count=4"));
    assert_int_equal(p.rc, DEMO_RUN);
    assert_false(p.opt.mpi);
    assert_true(p.opt.mpi_timeout == 0);
    assert_string_equal(p.opt.extra_values[0], "4");
    assert_null(p.opt.extra_values[1]);
    assert_false(p.opt.device_given);
    parsed_free(&p);

    p = parse(&with_mpi, ARGS("--help"));
    assert_non_null(strstr(p.out, "  --mpi                  run as one of MPI's ranks "
                                  "(mpirun -np N cugl-test --mpi):\n"));
    assert_non_null(strstr(p.out, "  --mpi-timeout SECONDS  how long a rank waits for the others"));
    parsed_free(&p);
    p = parse(&with_extras, ARGS("--help"));
    assert_null(strstr(p.out, "--mpi"));
    parsed_free(&p);

    check_bad(&with_mpi, ARGS("--mpi", "--compute-device", "1"),
              "--compute-device and --devices are for one process");
    check_bad(&with_mpi, ARGS("--mpi-timeout", "5"), "--mpi-timeout is for --mpi");
    const char *const timeouts[] = {"0", "-1", "x", "1e9", "nan", "5s", ""};
    for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "--mpi-timeout: '%s' is not a number of seconds above 0",
                 timeouts[i]);
        check_bad(&with_mpi, ARGS("--mpi", "--mpi-timeout", timeouts[i]), want);
    }
    check_bad(&with_extras, ARGS("--mpi"), "unknown option '--mpi'");
    check_bad(&with_extras, ARGS("--mpi-timeout", "3"), "unknown option '--mpi-timeout'");
}

static void interop_names(void **state)
{
    (void)state;
    assert_string_equal(demo_interop_name(CUGL_APP_INTEROP_MAP), "map");
    assert_string_equal(demo_interop_name(CUGL_APP_INTEROP_SHARED), "shared");
    assert_string_equal(demo_interop_name(CUGL_APP_INTEROP_HOST), "host");
    assert_string_equal(demo_interop_name((demo_interop)7), "invalid");
    for (int k = CUGL_APP_INTEROP_AUTO; k <= CUGL_APP_INTEROP_HOST; k++) {
        demo_interop got = (demo_interop)-1;
        assert_true(demo_interop_from_name(&got, demo_interop_name((demo_interop)k)));
        assert_int_equal(got, k);
    }
    assert_string_equal(demo_interop_name(CUGL_APP_INTEROP_AUTO), "auto");
    demo_interop got = CUGL_APP_INTEROP_HOST;
    assert_false(demo_interop_from_name(&got, "Map"));
    assert_false(demo_interop_from_name(&got, ""));
    assert_int_equal(got, CUGL_APP_INTEROP_HOST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(every_flag),
        cmocka_unit_test(a_demos_own_flags),
        cmocka_unit_test(values_after_equals),
        cmocka_unit_test(the_last_of_a_flag_wins),
        cmocka_unit_test(help_goes_to_out),
        cmocka_unit_test(bad_flags_exit_2),
        cmocka_unit_test(flags_of_other_demos_are_unknown),
        cmocka_unit_test(usage_is_the_demos_own),
        cmocka_unit_test(compute_devices),
        cmocka_unit_test(interop_names),
        cmocka_unit_test(mpi_flags),
    };
    return cugl_test_run(tests);
}
