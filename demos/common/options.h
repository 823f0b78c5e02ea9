/*
 * options.h - the command line every demo shares.
 *
 *   --headless          render offscreen (EGL) even where a display is reachable
 *   --size WxH          framebuffer size in pixels (default 1024x768)
 *   --frames N          render N frames, then exit (default: until the window
 *                       closes; headless: 60)
 *   --screenshot FILE   write the last frame as a PNG
 *   --interop PATH      how CUDA's output reaches GL: auto (default: the fastest
 *                       that works here), map, shared, host
 *   --input FILE        replay the input events of FILE (cugl/app.h's format)
 *   --save-input FILE   write every input event of the run to FILE
 *   --view V1,V2,...    (demos with demo_info.view) the view to start from, as
 *                       numbers: the orbit camera's, or the demo's own
 *   --bench             print the per-phase frame times at exit
 *   --soak N            every N frames, a line of what the process holds (host
 *                       memory, malloc's heap, files, device memory) and of the
 *                       frame and hand-over times since the last line
 *   --pipelined         GL shows CUDA's output a frame late (shared memory, map);
 *                       windows without --frames pipeline anyway
 *   --ui                show the UI panel headless too (windows show it; F1 toggles)
 *   --device N          the GL GPU as a CUDA device ordinal (default 0)
 *   --compute-device N  the CUDA work on device N (default: the GL GPU)
 *   --devices N1,N2,... (demos with demo_info.multi_device) the CUDA work
 *                       split over these devices
 *   --serve [ADDR:]PORT serve the frames to web browsers (cugl/app_serve.h),
 *                       on 127.0.0.1 unless ADDR is given; PORT 0: any free
 *   --serve-token T     the token the page's URL must carry (default:
 *                       $CUGL_SERVE_TOKEN; none without either)
 *   --serve-codec C     jpeg, video or auto (default: each viewer by its link)
 *   --serve-cert F, --serve-key F  HTTPS and WSS with this certificate and key
 *   --record DIR        every frame as DIR/<name>-NNNNNN.png, and DIR/<name>.mp4
 *                       through ffmpeg when it is installed
 *   --dump-vertices FILE  (demos that draw vertices) the last frame's vertex
 *                       buffer as raw little-endian floats
 *   --mpi               (demos with demo_info.mpi) run as one of MPI's ranks
 *                       (mpirun -np N): each rank computes and draws its share
 *                       on its GPU, rank 0 shows the composite
 *   --mpi-timeout S     with --mpi: how long a rank waits for the others (60)
 *   --help              usage on stdout, exit status 0
 *
 * A demo may add flags of its own (demo_info.extra).
 * Values may follow as the next argument or after '=' (--size=640x480).
 * Needs neither CUDA nor GL, so the unit tests check it anywhere.
 */
#ifndef CUGL_DEMO_OPTIONS_H
#define CUGL_DEMO_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include <cugl/app_interop.h>

/* The --interop paths are libcugl-app's, one list (CUGL_APP_INTEROP_LIST):
 * a path it gains is an option here with nothing more. */
typedef cugl_app_interop demo_interop;

/*
 * A flag of one demo's own ("--bodies N"). `parse` checks and keeps the
 * value (NULL for a flag without one) and returns NULL, or what is wrong
 * with it ("is not a number from 1 to 1048576"), which the parser prints
 * after the flag's name.
 */
typedef struct demo_flag {
    const char *name;  /* "--bodies" */
    const char *value; /* the value's name in the usage ("N"); NULL: takes none */
    const char *help;  /* one line for the usage */
    const char *(*parse)(const char *value, void *user);
    void *user;
} demo_flag;

/* --view's numbers for a demo that looks through the orbit camera. */
#define DEMO_VIEW_ORBIT                                                        \
    "the orbit camera's yaw,pitch,distance[,x,y,z] (radians,\n"               \
    "the distance, the point looked at)"

/* What a demo is called and which optional flags it takes. */
typedef struct demo_info {
    const char *program;  /* "cugl-julia": messages start with it */
    const char *name;     /* "julia": the default screenshot is julia.png */
    const char *summary;  /* one line for the usage text */
    const char *controls; /* the window controls, one or more lines; may be NULL */
    /* What --view's numbers are, for the usage (DEMO_VIEW_ORBIT, or the
     * demo's own; lines after the first are indented); NULL: the demo has
     * no view and takes no --view. */
    const char *view;
    bool dump_vertices;   /* takes --dump-vertices FILE */
    bool multi_device;    /* takes --devices N1,N2,...: splits its work */
    /* Parts this build of libcugl-app lacks, for the usage (demo_start
     * fills them in): the UI panel (--ui), the frame server (--serve). */
    bool without_ui, without_serve;
    const demo_flag *extra; /* the demo's own flags, ended by one with name NULL; may be NULL */
    /* Takes --mpi: the ranks' code (common/demo_mpi.h's demo_mpi, which says why
     * not where the build has no MPI); NULL: no --mpi. */
    const struct demo_mpi_backend *mpi;
    /* --mpi: the ranks' pictures add up (additive blending, rank 0 alone
     * clears to the background); else the nearest fragment of any rank wins. */
    bool mpi_additive;
} demo_info;

/* A decimal integer in [min, max] (digits only): for demo_flag parsers. */
bool demo_parse_long(const char *s, long min, long max, long *out);

enum {
    DEMO_MAX_VIEW = 8,     /* numbers in a --view */
    DEMO_MAX_DEVICES = 16, /* devices in a --devices list */
    DEMO_MAX_EXTRA = 16,   /* demo_info.extra flags whose values are kept */
};

/* The parsed command line; demo_options_parse fills every field. */
typedef struct demo_options {
    bool headless;
    int width, height; /* 0: the default size */
    long frames;       /* 0: not given */
    const char *screenshot;    /* NULL: not given */
    demo_interop interop;      /* AUTO: chosen once the GL context exists */
    const char *input;         /* NULL: not given */
    const char *save_input;    /* NULL: not given */
    float view[DEMO_MAX_VIEW]; /* --view's numbers */
    int view_count;            /* 0: not given */
    bool bench;
    long soak;                 /* --soak's N; 0: not given */
    bool pipelined;                   /* --pipelined */
    bool ui;                   /* the panel shown, headless too */
    int device;                       /* the GL GPU */
    bool device_given;                /* --device was given */
    int compute[DEMO_MAX_DEVICES];    /* --compute-device or --devices */
    int compute_count;                /* 0: CUDA runs on the GL GPU */
    bool serve;                       /* --serve */
    char serve_address[64];           /* "" : 127.0.0.1 */
    int serve_port;
    const char *serve_token;          /* NULL: not given */
    int serve_codec;                  /* --serve-codec: cugl_app_serve_codec */
    const char *serve_cert, *serve_key; /* --serve-cert, --serve-key; NULL: plain HTTP */
    const char *dump_vertices; /* NULL: not given */
    const char *record;        /* NULL: not given */
    int record_codec;          /* --record-codec: cugl_app_record_codec (0: the file's) */
    int record_kbps;           /* --record-kbps; 0: not given */
    bool mpi;                  /* --mpi */
    double mpi_timeout;        /* --mpi-timeout's seconds; 0: not given */
    /* The values of the demo's own flags as given (demo_info.extra's
     * order; "" for a flag without a value); NULL: not given. */
    const char *extra_values[DEMO_MAX_EXTRA];
} demo_options;

enum {
    DEMO_RUN = -1,        /* parsed: go on */
    DEMO_EXIT_USAGE = 2,  /* the exit status for a bad command line */
    DEMO_MAX_SIZE = 16384,       /* the largest --size width or height */
    DEMO_MAX_FRAMES = 1000000000, /* the largest --frames */
    DEMO_MAX_DEVICE = 1023,       /* the largest --device */
    DEMO_MPI_TIMEOUT = 60,        /* --mpi-timeout's default, seconds */
    DEMO_MAX_MPI_TIMEOUT = 86400, /* the largest --mpi-timeout */
    DEMO_MAX_RECORD_KBPS = 1000000, /* the largest --record-kbps (CUGL_APP_RECORD_MAX_KBPS) */
};

/** Whether --record's argument names a video file (.mp4, .webm), not a folder. */
bool demo_record_is_video(const char *arg);

/**
 * Parse argv[1 .. argc-1] into *opt. Returns DEMO_RUN to go on, or the
 * status to exit with: 0 after --help (the usage went to `out`), or
 * DEMO_EXIT_USAGE after a bad flag or value (a line naming it, then the
 * usage, went to `err`).
 */
int demo_options_parse(demo_options *opt, const demo_info *info, int argc, char **argv,
                       FILE *out, FILE *err);

/** The usage text. */
void demo_options_usage(const demo_info *info, FILE *f);

/** "auto", "map", "shared" or "host"; "invalid" for none of them. */
const char *demo_interop_name(demo_interop interop);

/** The path named `name` into *out; false where there is none. */
bool demo_interop_from_name(demo_interop *out, const char *name);

#endif /* CUGL_DEMO_OPTIONS_H */
