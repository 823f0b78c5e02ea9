/*
 * options.c - see options.h.
 */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum flag_id {
    FLAG_HEADLESS,
    FLAG_SIZE,
    FLAG_FRAMES,
    FLAG_SCREENSHOT,
    FLAG_INTEROP,
    FLAG_BENCH,
    FLAG_SOAK,
    FLAG_PIPELINED,
    FLAG_UI,
    FLAG_DEVICE,
    FLAG_COMPUTE_DEVICE,
    FLAG_DEVICES,
    FLAG_DUMP_VERTICES,
    FLAG_SERVE,
    FLAG_SERVE_TOKEN,
    FLAG_SERVE_CODEC,
    FLAG_SERVE_CERT,
    FLAG_SERVE_KEY,
    FLAG_RECORD,
    FLAG_RECORD_CODEC,
    FLAG_RECORD_KBPS,
    FLAG_INPUT,
    FLAG_SAVE_INPUT,
    FLAG_VIEW,
    FLAG_MPI,
    FLAG_MPI_TIMEOUT,
    FLAG_HELP,
    FLAG_EXTRA, /* one of demo_info.extra */
};

typedef struct flag {
    const char *name;
    enum flag_id id;
    const char *value; /* the value's name in messages; NULL: takes none */
} flag;

static const flag flags[] = {
    {"--headless", FLAG_HEADLESS, NULL},
    {"--size", FLAG_SIZE, "WIDTHxHEIGHT"},
    {"--frames", FLAG_FRAMES, "N"},
    {"--screenshot", FLAG_SCREENSHOT, "FILE"},
#define INTEROP_BAR(id, value, name, help) "|" name
    /* "|auto|map|shared|host": the first bar is skipped */
    {"--interop", FLAG_INTEROP, &(CUGL_APP_INTEROP_LIST(INTEROP_BAR))[1]},
#undef INTEROP_BAR
    {"--bench", FLAG_BENCH, NULL},
    {"--soak", FLAG_SOAK, "N"},
    {"--pipelined", FLAG_PIPELINED, NULL},
    {"--ui", FLAG_UI, NULL},
    {"--device", FLAG_DEVICE, "N"},
    {"--compute-device", FLAG_COMPUTE_DEVICE, "N"},
    {"--devices", FLAG_DEVICES, "N1,N2,..."},
    {"--dump-vertices", FLAG_DUMP_VERTICES, "FILE"},
    {"--serve", FLAG_SERVE, "[ADDR:]PORT"},
    {"--serve-token", FLAG_SERVE_TOKEN, "TOKEN"},
    {"--serve-codec", FLAG_SERVE_CODEC, "jpeg|video|auto"},
    {"--serve-cert", FLAG_SERVE_CERT, "FILE"},
    {"--serve-key", FLAG_SERVE_KEY, "FILE"},
    {"--record", FLAG_RECORD, "DIR|FILE"},
    {"--record-codec", FLAG_RECORD_CODEC, "h264|vp8|vp9"},
    {"--record-kbps", FLAG_RECORD_KBPS, "N"},
    {"--input", FLAG_INPUT, "FILE"},
    {"--save-input", FLAG_SAVE_INPUT, "FILE"},
    {"--view", FLAG_VIEW, "V1,V2,..."},
    {"--mpi", FLAG_MPI, NULL},
    {"--mpi-timeout", FLAG_MPI_TIMEOUT, "SECONDS"},
    {"--help", FLAG_HELP, NULL},
};

static const struct {
    const char *name, *help;
} interops[] = {
#define INTEROP_ROW(id, value, name, help) [value] = {name, help},
    CUGL_APP_INTEROP_LIST(INTEROP_ROW)
#undef INTEROP_ROW
};

enum { INTEROP_COUNT = sizeof interops / sizeof interops[0] };

const char *demo_interop_name(demo_interop interop)
{
    return (unsigned)interop < INTEROP_COUNT ? interops[interop].name : "invalid";
}

bool demo_interop_from_name(demo_interop *out, const char *name)
{
    for (int k = 0; k < INTEROP_COUNT; k++) {
        if (strcmp(name, interops[k].name) == 0) {
            *out = (demo_interop)k;
            return true;
        }
    }
    return false;
}

void demo_options_usage(const demo_info *info, FILE *f)
{
    fprintf(f, "usage: %s [options]\n%s\n\noptions:\n", info->program, info->summary);
    fprintf(f,
            "  --headless             render offscreen even where a display is reachable\n"
            "  --size WxH             framebuffer size in pixels (default 1024x768)\n"
            "  --frames N             render N frames, then exit (default: until the\n"
            "                         window closes; headless: 60)\n"
            "  --screenshot FILE      write the last frame as a PNG (headless default:\n"
            "                         %s.png)\n"
            "  --interop PATH         how CUDA's output reaches GL (default auto):\n",
            info->name);
    for (int i = 0; i < INTEROP_COUNT; i++)
        fprintf(f, "                           %-7s %s\n", interops[i].name, interops[i].help);
    fprintf(f, "  --bench                print per-phase frame times at exit\n"
               "  --soak N               every N frames, print what the process holds (host\n"
               "                         memory, malloc's heap, open files, device memory,\n"
               "                         cugl's live objects and bytes) and the median frame\n"
               "                         and a hand-over since the last line\n"
               "  --pipelined            GL shows CUDA's output a frame late and neither waits\n"
               "                         (shared memory, and on map two objects in turn;\n"
               "                         windows without --frames pipeline shared memory anyway;\n"
               "                         the frames --screenshot and --record keep are exact)\n"
               "  --ui                   show the UI panel in headless pictures too (a window\n"
               "                         shows it; F1 hides and shows it)\n");
    if (info->without_ui)
        fprintf(f, "                         (not in this build: the panel needs Debian's\n"
                   "                         libimgui-dev)\n");
    fprintf(f, "  --device N             the GL GPU, as a CUDA device ordinal (default 0)\n"
               "  --compute-device N     run the CUDA work on device N (default: the GL GPU);\n"
               "                         its output reaches GL through peer memory\n");
    if (info->multi_device)
        fprintf(f, "  --devices N1,N2,...    split the CUDA work over these devices (peer memory)\n");
    fprintf(f, "  --record FILE.mp4|FILE.webm\n"
               "                         record every frame (60 a second) as H.264 in MP4 or\n"
               "                         VP8 in WebM, encoded off the render loop\n"
               "  --record-codec C       h264 (.mp4), vp8 or vp9 (.webm): the file's codec\n"
               "  --record-kbps N        the file's bitrate, kbit/s (default: 0.1 bit a pixel\n"
               "                         a frame)\n"
               "  --record DIR           write every frame as DIR/%s-NNNNNN.png, and\n"
               "                         DIR/%s.mp4 where ffmpeg is installed\n",
            info->name, info->name);
    fprintf(f, "  --serve [ADDR:]PORT    serve the frames to web browsers, driven from there\n"
               "                         (on 127.0.0.1 unless ADDR is given; PORT 0: any);\n"
               "                         served, the demo runs until it is stopped\n"
               "  --serve-token TOKEN    the page's URL must carry ?token=TOKEN (default:\n"
               "                         $CUGL_SERVE_TOKEN)\n"
               "  --serve-codec C        jpeg, video (VP8) or auto: each viewer by its link\n"
               "  --serve-cert FILE, --serve-key FILE  HTTPS and WSS (PEM files)\n");
    if (info->without_serve)
        fprintf(f, "                         (not in this build: the frame server needs\n"
                   "                         Debian's libwebsockets-dev and libturbojpeg0-dev)\n");
    fprintf(f, "  --input FILE           replay the input events in FILE, each at its frame\n"
               "  --save-input FILE      write every input event of this run to FILE\n");
    if (info->view) {
        fprintf(f, "  --view V1,V2,...       start from this view (printed at exit after --input):\n");
        for (const char *line = info->view; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(f, "                         %.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
    if (info->dump_vertices)
        fprintf(f, "  --dump-vertices FILE   write the last frame's vertex buffer (raw floats)\n");
    if (info->mpi)
        fprintf(f, "  --mpi                  run as one of MPI's ranks (mpirun -np N %s --mpi):\n"
                   "                         each computes and draws its share on its GPU (a\n"
                   "                         host's ranks take its GPUs in turn, or --device),\n"
                   "                         rank 0 shows the composite with every option here;\n"
                   "                         the others need the same --size, --frames, --bench\n"
                   "                         and the demo's own options\n"
                   "  --mpi-timeout SECONDS  how long a rank waits for the others before it\n"
                   "                         gives up with a message (default %d)\n",
                info->program, DEMO_MPI_TIMEOUT);
    for (const demo_flag *x = info->extra; x && x->name; x++) {
        char head[40];
        snprintf(head, sizeof head, "%s%s%s", x->name, x->value ? " " : "",
                 x->value ? x->value : "");
        fprintf(f, "  %-22s %s\n", head, x->help);
    }
    fprintf(f, "  --help                 show this and exit\n");
    if (info->controls)
        fprintf(f, "\ncontrols:\n%s", info->controls);
    fprintf(f, "\nWithout --frames in a window, time runs on the clock; with --frames,\n"
               "--screenshot or headless, frame i shows time i/60 s, the same on every run.\n");
}

static int usage_error(const demo_info *info, FILE *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "<program>: <message>", a blank line, the usage; the status to exit with. */
static int usage_error(const demo_info *info, FILE *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(err, "%s: ", info->program);
    vfprintf(err, fmt, ap);
    va_end(ap);
    fprintf(err, "\n\n");
    demo_options_usage(info, err);
    return DEMO_EXIT_USAGE;
}

/* Up to DEMO_MAX_VIEW finite numbers, separated by commas. */
static bool parse_view(const char *s, float *v, int *count)
{
    int n = 0;
    for (;;) {
        char *end;
        errno = 0;
        float x = strtof(s, &end);
        if (end == s || errno != 0 || !isfinite(x) || n == DEMO_MAX_VIEW)
            return false;
        v[n++] = x;
        if (*end == '\0')
            break;
        if (*end != ',')
            return false;
        s = end + 1;
    }
    *count = n;
    return true;
}

/* A decimal integer in [min, max]: digits only, no sign, no spaces. */
static bool parse_long(const char *s, const char *end, long min, long max, long *out)
{
    if (s == end)
        return false;
    long v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (v > (max - (*s - '0')) / 10)
            return false;
        v = v * 10 + (*s - '0');
    }
    if (v < min)
        return false;
    *out = v;
    return true;
}

static bool parse_size(const char *s, int *width, int *height)
{
    const char *x = strchr(s, 'x');
    long w, h;
    if (!x || !parse_long(s, x, 1, DEMO_MAX_SIZE, &w) ||
        !parse_long(x + 1, x + 1 + strlen(x + 1), 1, DEMO_MAX_SIZE, &h))
        return false;
    *width = (int)w;
    *height = (int)h;
    return true;
}

bool demo_parse_long(const char *s, long min, long max, long *out)
{
    return s && parse_long(s, s + strlen(s), min, max, out);
}

/* Device ordinals separated by commas, each once: 1 to DEMO_MAX_DEVICES of them. */
static bool parse_devices(const char *s, int *devices, int *count)
{
    int n = 0;
    for (;;) {
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        long v;
        if (n == DEMO_MAX_DEVICES || !parse_long(s, end, 0, DEMO_MAX_DEVICE, &v))
            return false;
        for (int i = 0; i < n; i++)
            if (devices[i] == (int)v)
                return false;
        devices[n++] = (int)v;
        if (*end == '\0')
            break;
        s = end + 1;
    }
    *count = n;
    return true;
}

/* [ADDR:]PORT, ADDR an IPv4 address, a host name or a bracketed IPv6
 * address ("[::1]:8080"). */
static bool parse_serve(const char *s, char *address, size_t size, int *port)
{
    const char *colon = strrchr(s, ':');
    const char *digits = colon ? colon + 1 : s;
    long p;
    if (!parse_long(digits, digits + strlen(digits), 0, 65535, &p))
        return false;
    address[0] = '\0';
    if (colon) {
        const char *a = s, *end = colon;
        if (*a == '[') {
            if (end[-1] != ']')
                return false;
            a++;
            end--;
        }
        if (end == a || (size_t)(end - a) >= size || memchr(a, '[', (size_t)(end - a)) ||
            memchr(a, ']', (size_t)(end - a)) || (s[0] != '[' && memchr(a, ':', (size_t)(end - a))))
            return false;
        memcpy(address, a, (size_t)(end - a));
        address[end - a] = '\0';
    }
    *port = (int)p;
    return true;
}

/* The flag `name` (of `len` bytes): a common one, or one of the demo's
 * (then *extra is it, and the returned flag describes it). */
static const flag *find_flag(const demo_info *info, const char *name, size_t len,
                             const demo_flag **extra, flag *scratch)
{
    *extra = NULL;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if ((flags[i].id == FLAG_DUMP_VERTICES && !info->dump_vertices) ||
            (flags[i].id == FLAG_DEVICES && !info->multi_device) ||
            ((flags[i].id == FLAG_MPI || flags[i].id == FLAG_MPI_TIMEOUT) && !info->mpi) ||
            (flags[i].id == FLAG_VIEW && !info->view))
            continue;
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    }
    for (const demo_flag *x = info->extra; x && x->name; x++) {
        if (strlen(x->name) == len && strncmp(x->name, name, len) == 0) {
            *extra = x;
            *scratch = (flag){x->name, FLAG_EXTRA, x->value};
            return scratch;
        }
    }
    return NULL;
}

bool demo_record_is_video(const char *arg)
{
    size_t n = strlen(arg);
    return (n > 4 && strcasecmp(arg + n - 4, ".mp4") == 0) ||
           (n > 5 && strcasecmp(arg + n - 5, ".webm") == 0);
}

int demo_options_parse(demo_options *opt, const demo_info *info, int argc, char **argv,
                       FILE *out, FILE *err)
{
    *opt = (demo_options){.interop = CUGL_APP_INTEROP_AUTO};
    for (int i = 1; i < argc; i++) {
        const char *arg = strcmp(argv[i], "-h") == 0 ? "--help" : argv[i];
        if (strncmp(arg, "--", 2) != 0)
            return usage_error(info, err, "unexpected argument '%s'", arg);
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const demo_flag *extra;
        flag scratch;
        const flag *f = find_flag(info, arg, len, &extra, &scratch);
        if (!f)
            return usage_error(info, err, "unknown option '%.*s'", (int)len, arg);
        const char *value = eq ? eq + 1 : NULL;
        if (f->value && !value) {
            /* A flag where the value should be means the value is missing. */
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                return usage_error(info, err, "%s needs a value: %s", f->name, f->value);
            value = argv[++i];
        } else if (!f->value && value) {
            return usage_error(info, err, "%s takes no value (got '%s')", f->name, value);
        }
        long n;
        switch (f->id) {
        case FLAG_HEADLESS:
            opt->headless = true;
            break;
        case FLAG_SIZE:
            if (!parse_size(value, &opt->width, &opt->height))
                return usage_error(info, err,
                                   "--size: '%s' is not WIDTHxHEIGHT with each from 1 to %d",
                                   value, DEMO_MAX_SIZE);
            break;
        case FLAG_FRAMES:
            if (!parse_long(value, value + strlen(value), 1, DEMO_MAX_FRAMES, &n))
                return usage_error(info, err, "--frames: '%s' is not a number from 1 to %ld", value,
                                   (long)DEMO_MAX_FRAMES);
            opt->frames = n;
            break;
        case FLAG_SOAK:
            if (!parse_long(value, value + strlen(value), 1, DEMO_MAX_FRAMES, &n))
                return usage_error(info, err, "--soak: '%s' is not a number from 1 to %ld", value,
                                   (long)DEMO_MAX_FRAMES);
            opt->soak = n;
            break;
        case FLAG_SCREENSHOT:
        case FLAG_DUMP_VERTICES:
        case FLAG_RECORD:
        case FLAG_INPUT:
        case FLAG_SAVE_INPUT:
            if (!*value)
                return usage_error(info, err, "%s needs a %s name", f->name,
                                   f->id == FLAG_RECORD ? "folder" : "file");
            if (f->id == FLAG_SCREENSHOT)
                opt->screenshot = value;
            else if (f->id == FLAG_RECORD)
                opt->record = value;
            else if (f->id == FLAG_INPUT)
                opt->input = value;
            else if (f->id == FLAG_SAVE_INPUT)
                opt->save_input = value;
            else
                opt->dump_vertices = value;
            break;
        case FLAG_EXTRA: {
            const char *why = extra->parse(value, extra->user);
            if (why)
                return usage_error(info, err, "%s: '%s' %s", f->name, value ? value : "", why);
            if (extra - info->extra < DEMO_MAX_EXTRA)
                opt->extra_values[extra - info->extra] = value ? value : "";
            break;
        }
        case FLAG_MPI:
            opt->mpi = true;
            break;
        case FLAG_MPI_TIMEOUT: {
            char *end;
            errno = 0;
            double t = strtod(value, &end);
            if (end == value || *end || errno || !(t > 0 && t <= DEMO_MAX_MPI_TIMEOUT))
                return usage_error(info, err, "--mpi-timeout: '%s' is not a number of seconds "
                                   "above 0, at most %d", value, DEMO_MAX_MPI_TIMEOUT);
            opt->mpi_timeout = t;
            break;
        }
        case FLAG_INTEROP: {
            if (!demo_interop_from_name(&opt->interop, value)) {
                /* "is not auto, map, shared or host" */
                char names[128] = "";
                for (int j = 0; j < INTEROP_COUNT; j++)
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                             j == 0 ? "" : j + 1 < INTEROP_COUNT ? ", " : " or ",
                             interops[j].name);
                return usage_error(info, err, "--interop: '%s' is not %s", value, names);
            }
            break;
        }
        case FLAG_VIEW:
            if (!parse_view(value, opt->view, &opt->view_count))
                return usage_error(info, err, "--view: '%s' is not 1 to %d numbers separated by "
                                   "commas", value, DEMO_MAX_VIEW);
            break;
        case FLAG_UI:
            opt->ui = true;
            break;
        case FLAG_BENCH:
            opt->bench = true;
            break;
        case FLAG_PIPELINED:
            opt->pipelined = true;
            break;
        case FLAG_DEVICE:
            if (!parse_long(value, value + strlen(value), 0, DEMO_MAX_DEVICE, &n))
                return usage_error(info, err, "--device: '%s' is not a device ordinal (0 to %d)",
                                   value, DEMO_MAX_DEVICE);
            opt->device = (int)n;
            opt->device_given = true;
            break;
        case FLAG_COMPUTE_DEVICE:
        case FLAG_DEVICES:
            if (opt->compute_count > 0)
                return usage_error(info, err, "%s: the compute devices were given already", f->name);
            if (f->id == FLAG_COMPUTE_DEVICE) {
                if (!parse_long(value, value + strlen(value), 0, DEMO_MAX_DEVICE, &n))
                    return usage_error(info, err,
                                       "--compute-device: '%s' is not a device ordinal (0 to %d)",
                                       value, DEMO_MAX_DEVICE);
                opt->compute[0] = (int)n;
                opt->compute_count = 1;
            } else if (!parse_devices(value, opt->compute, &opt->compute_count)) {
                return usage_error(info, err,
                                   "--devices: '%s' is not 1 to %d different device ordinals "
                                   "(0 to %d) separated by commas",
                                   value, DEMO_MAX_DEVICES, DEMO_MAX_DEVICE);
            }
            break;
        case FLAG_SERVE:
            if (!parse_serve(value, opt->serve_address, sizeof opt->serve_address,
                             &opt->serve_port))
                return usage_error(info, err,
                                   "--serve: '%s' is not [ADDR:]PORT (PORT 0 to 65535; an IPv6 "
                                   "ADDR in brackets)",
                                   value);
            opt->serve = true;
            break;
        case FLAG_RECORD_CODEC: {
            static const char *const codecs[] = {"h264", "vp8", "vp9"};
            opt->record_codec = 0;
            for (int k = 0; k < 3; k++)
                if (strcmp(value, codecs[k]) == 0)
                    opt->record_codec = k + 1; /* cugl_app_record_codec's order */
            if (!opt->record_codec)
                return usage_error(info, err, "--record-codec: '%s' is not h264, vp8 or vp9",
                                   value);
            break;
        }
        case FLAG_RECORD_KBPS:
            if (!parse_long(value, value + strlen(value), 1, DEMO_MAX_RECORD_KBPS, &n))
                return usage_error(info, err, "--record-kbps: '%s' is not a number from 1 to %ld",
                                   value, (long)DEMO_MAX_RECORD_KBPS);
            opt->record_kbps = (int)n;
            break;
        case FLAG_SERVE_CODEC:
            if (strcmp(value, "auto") && strcmp(value, "jpeg") && strcmp(value, "video"))
                return usage_error(info, err, "--serve-codec: '%s' is not jpeg, video or auto",
                                   value);
            opt->serve_codec = value[0] == 'j' ? 1 : value[0] == 'v' ? 2 : 0;
            break;
        case FLAG_SERVE_CERT:
            opt->serve_cert = value;
            break;
        case FLAG_SERVE_KEY:
            opt->serve_key = value;
            break;
        case FLAG_SERVE_TOKEN:
            if (!*value)
                return usage_error(info, err, "--serve-token needs a token");
            opt->serve_token = value;
            break;
        case FLAG_HELP:
            demo_options_usage(info, out);
            return 0;
        }
    }
    if (opt->mpi && opt->compute_count > 0)
        return usage_error(info, err, "--mpi runs one GPU a rank (a host's ranks take its GPUs "
                           "in turn, or --device); --compute-device and --devices are for one "
                           "process");
    if (opt->mpi_timeout > 0 && !opt->mpi)
        return usage_error(info, err, "--mpi-timeout is for --mpi");
    if ((opt->record_codec || opt->record_kbps) &&
        !(opt->record && demo_record_is_video(opt->record)))
        return usage_error(info, err, "--record-codec and --record-kbps are for --record "
                           "FILE.mp4|FILE.webm (a video file, not a folder of PNG files)");
    return DEMO_RUN;
}
