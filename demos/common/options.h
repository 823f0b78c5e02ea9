/*
 * options.h - the command line every demo shares.
 *
 *   --headless          render offscreen (EGL) even where a display is reachable
 *   --size WxH          framebuffer size in pixels (default 1024x768)
 *   --frames N          render N frames, then exit (default: until the window
 *                       closes; headless: 60)
 *   --screenshot FILE   write the last frame as a PNG
 *   --interop PATH      how CUDA's output reaches GL: map (default), shared, host
 *   --bench             print the per-phase frame times at exit
 *   --device N          the CUDA device (default 0); GL runs on it too
 *   --dump-vertices FILE  (demos that draw vertices) the last frame's vertex
 *                       buffer as raw little-endian floats
 *   --help              usage on stdout, exit status 0
 *
 * Values may follow as the next argument or after '=' (--size=640x480).
 * Needs neither CUDA nor GL, so the unit tests check it anywhere.
 */
#ifndef CUGL_DEMO_OPTIONS_H
#define CUGL_DEMO_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

typedef enum demo_interop {
    DEMO_INTEROP_MAP = 0,    /* register the GL object, map it every frame */
    DEMO_INTEROP_SHARED = 1, /* CUDA memory that GL imports: no map per frame */
    DEMO_INTEROP_HOST = 2,   /* through pinned host memory and a GL upload */
} demo_interop;

/* What a demo is called and which optional flags it takes. */
typedef struct demo_info {
    const char *program;  /* "cugl-julia": messages start with it */
    const char *name;     /* "julia": the default screenshot is julia.png */
    const char *summary;  /* one line for the usage text */
    const char *controls; /* the window controls, one or more lines; may be NULL */
    bool dump_vertices;   /* takes --dump-vertices FILE */
} demo_info;

/* The parsed command line; demo_options_parse fills every field. */
typedef struct demo_options {
    bool headless;
    int width, height; /* 0: the default size */
    long frames;       /* 0: not given */
    const char *screenshot;    /* NULL: not given */
    demo_interop interop;
    bool bench;
    int device;
    const char *dump_vertices; /* NULL: not given */
} demo_options;

enum {
    DEMO_RUN = -1,        /* parsed: go on */
    DEMO_EXIT_USAGE = 2,  /* the exit status for a bad command line */
    DEMO_MAX_SIZE = 16384,       /* the largest --size width or height */
    DEMO_MAX_FRAMES = 1000000000, /* the largest --frames */
    DEMO_MAX_DEVICE = 1023,       /* the largest --device */
};

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

/** "map", "shared" or "host". */
const char *demo_interop_name(demo_interop interop);

#endif /* CUGL_DEMO_OPTIONS_H */
