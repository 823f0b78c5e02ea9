/*
 * fuzz_options: the demos' command-line parser (demos/common/options.c) on
 * argument vectors made of the input's NUL-separated strings. Nothing may
 * crash or trip a sanitizer; a parse returns DEMO_RUN, 0 or
 * DEMO_EXIT_USAGE; after DEMO_RUN every field is in its documented range,
 * and after a refusal the first line of the message names the program.
 */
#include <string.h>

#include "options.h"

#include "layout_oracle.h"

static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap);
static void run_one(const uint8_t *data, size_t size);

#include "fuzz_main.h"

static long count_value;

static const char *parse_count(const char *value, void *user)
{
    return demo_parse_long(value, 1, 100, (long *)user) ? NULL : "is not a number from 1 to 100";
}

static const demo_flag extra[] = {
    {"--count", "N", "how many", parse_count, &count_value},
    {0},
};

static const demo_info info = {
    .program = "cugl-fuzz",
    .name = "fuzz",
    .summary = "A demo for the fuzzer.",
    .view = DEMO_VIEW_ORBIT,
    .dump_vertices = true,
    .multi_device = true,
    .extra = extra,
};

enum { MAX_ARGS = 32 };

static void run_one(const uint8_t *data, size_t size)
{
    char text[FUZZ_MAX_INPUT + 1];
    fuzz_text(text, data, size);
    if (size > FUZZ_MAX_INPUT)
        size = FUZZ_MAX_INPUT;
    char *argv[MAX_ARGS + 1] = {"cugl-fuzz"};
    int argc = 1;
    for (size_t i = 0; i < size && argc < MAX_ARGS; i += strlen(text + i) + 1)
        argv[argc++] = text + i;
    argv[argc] = NULL;

    char *out = NULL, *err = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *fo = open_memstream(&out, &out_len), *fe = open_memstream(&err, &err_len);
    if (!fo || !fe)
        abort();
    demo_options opt;
    int rc = demo_options_parse(&opt, &info, argc, argv, fo, fe);
    fclose(fo);
    fclose(fe);
    if (rc != DEMO_RUN && rc != 0 && rc != DEMO_EXIT_USAGE)
        FUZZ_VIOLATED("options: returned %d", rc);
    if (rc == DEMO_EXIT_USAGE && strncmp(err, "cugl-fuzz: ", 11) != 0)
        FUZZ_VIOLATED("options: a refusal's message does not name the program: %.60s", err);
    if (rc == DEMO_RUN) {
        if (opt.width < 0 || opt.width > DEMO_MAX_SIZE || opt.height < 0 ||
            opt.height > DEMO_MAX_SIZE || (opt.width == 0) != (opt.height == 0))
            FUZZ_VIOLATED("options: size %d x %d", opt.width, opt.height);
        if (opt.frames < 0 || opt.frames > DEMO_MAX_FRAMES)
            FUZZ_VIOLATED("options: frames %ld", opt.frames);
        if (opt.device < 0 || opt.device > DEMO_MAX_DEVICE)
            FUZZ_VIOLATED("options: device %d", opt.device);
        if (opt.compute_count < 0 || opt.compute_count > DEMO_MAX_DEVICES)
            FUZZ_VIOLATED("options: %d compute devices", opt.compute_count);
        for (int i = 0; i < opt.compute_count; i++)
            for (int j = 0; j < i; j++)
                if (opt.compute[i] == opt.compute[j] || opt.compute[i] < 0 ||
                    opt.compute[i] > DEMO_MAX_DEVICE)
                    FUZZ_VIOLATED("options: compute device %d", opt.compute[i]);
        if (opt.view_count < 0 || opt.view_count > DEMO_MAX_VIEW)
            FUZZ_VIOLATED("options: %d view numbers", opt.view_count);
        if (opt.serve_port < 0 || opt.serve_port > 65535 ||
            !memchr(opt.serve_address, '\0', sizeof opt.serve_address))
            FUZZ_VIOLATED("options: serve port %d", opt.serve_port);
        if ((int)opt.interop < CUGL_APP_INTEROP_AUTO || (int)opt.interop > CUGL_APP_INTEROP_HOST)
            FUZZ_VIOLATED("options: interop %d", (int)opt.interop);
    }
    free(out);
    free(err);
}

/* Flags and values, right and wrong, in random order. */
static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap)
{
    static const char *const words[] = {
        "--headless", "--size", "640x480", "16384x1", "0x5", "--frames", "3", "-1",
        "99999999999", "--screenshot", "a.png", "--interop", "auto", "map", "shared", "host",
        "bogus", "--bench", "--ui", "--device", "1023", "1024", "--compute-device", "--devices",
        "0,1", "0,0", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", ",", "--dump-vertices",
        "--record", "--input", "--save-input", "--view", "1,2,3", "nan", "1e39", "--serve",
        "8080", "127.0.0.1:0", "[::1]:80", "[::1", "a:b:c", ":", "65536", "--serve-token", "",
        "--count", "100", "101", "--help", "-h", "=", "--size=", "--frames=2", "x",
    };
    size_t len = 0;
    int n = (int)oracle_range(rng, 0, 12);
    for (int i = 0; i < n && len < cap; i++) {
        if (oracle_range(rng, 0, 9) == 0) {
            int k = (int)oracle_range(rng, 1, 8);
            for (int j = 0; j < k && len < cap; j++)
                buf[len++] = (uint8_t)oracle_range(rng, 1, 255);
        } else {
            fuzz_put(buf, &len, cap, words[oracle_range(rng, 0, sizeof words / sizeof words[0] - 1)]);
            if (oracle_range(rng, 0, 5) == 0) { /* --flag=value */
                fuzz_put(buf, &len, cap, "=");
                fuzz_put(buf, &len, cap,
                         words[oracle_range(rng, 0, sizeof words / sizeof words[0] - 1)]);
            }
        }
        if (len < cap)
            buf[len++] = 0;
    }
    return len;
}
