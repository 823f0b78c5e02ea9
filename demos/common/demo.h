/*
 * demo.h - what every cugl demo does the same way: the command line
 * (options.h), the CUDA device and its stream, the GL context (a window, or
 * headless EGL on the same GPU), the demo's kernels, the frame loop with
 * per-phase timing, the last frame's screenshot, and the exit status.
 *
 *   demo d;
 *   int rc = demo_start(&d, &info, argc, argv);
 *   if (rc != DEMO_RUN)
 *       return rc;
 *   ... demo_load_module, make GL objects and a demo_target ...
 *   rc = demo_run(&d, &callbacks, &state);
 *   ... free them ...
 *   return demo_finish(&d, rc);
 *
 * Exit statuses: 0 done, 1 a failure (the message names it; without a CUDA
 * driver or device that is the message too), 2 a bad command line.
 */
#ifndef CUGL_DEMO_H
#define CUGL_DEMO_H

#include <glad/gl.h> /* the demos' own GL loader, loaded from cugl_app_gl_proc */

#include <cugl/app.h>

#include "demo_math.h"
#include "options.h"
#include "record.h"

enum {
    DEMO_HEADLESS_FRAMES = 60, /* what a headless run renders without --frames */
    DEMO_FRAMES_IN_FLIGHT = 2, /* frames queued ahead of the GPU at most */
    DEMO_WARMUP_FRAMES = 10,   /* frames --bench's mean leaves out */
    DEMO_MAX_TARGETS = 4,      /* interop targets CUDA or GL takes in one turn */
    DEMO_SERVE_HZ = 60,        /* frames a second of a served headless demo */
};

/* Frame timer phases; each interop path names the ones it uses (target.h). */
enum {
    DEMO_PHASE_ACQUIRE = 0, /* before the kernel: map, or CUDA waits for GL */
    DEMO_PHASE_CUDA = 1,    /* "cuda": the demo's kernel */
    DEMO_PHASE_RELEASE = 2, /* after it: unmap, signal GL, or download */
    DEMO_PHASE_HANDOFF = 3, /* GL waits for CUDA, or uploads */
    DEMO_PHASE_DRAW = 4,    /* "draw": GL draws the frame */
    DEMO_PHASE_GL_COPY = 5, /* GL copies an image it made to where CUDA reads it */
    DEMO_PHASE_EXCHANGE = 6, /* "exchange": with --mpi, data the ranks send each other */
    DEMO_PHASE_PRESENT = 7, /* "present": the swap, then the wait for the frame
                             * DEMO_FRAMES_IN_FLIGHT back (the host path: for
                             * this one), the CPU waiting on the GPU */
};

/* The UI panel's frame-time plot: this many frames. */
enum { DEMO_PLOT_FRAMES = 120 };

typedef struct cugl_app_ui cugl_app_ui;
typedef struct cugl_app_server cugl_app_server;
struct demo_ranks;

/* What CUDA's turns on the targets did: target.c's (demo__turns_*,
 * demo_internal.h; a demo reads demo_turns_wait_on_gpu). */
typedef struct demo_turns {
    bool handover_probe; /* --bench measures a hand-over: the map path pipelines when asked to */
    /* Frames in which a shared target took its turn in lockstep, and the
     * frame + 1 last counted: a pipelined run has at most one (the kept
     * frame's). */
    long lockstep_frames, lockstep_mark;
    bool gpu_waits; /* a turn waited on the GPU (cugl_app_target_waits_on_gpu) */
} demo_turns;

/* What --bench and --soak measure: bench.c's (demo__bench_*,
 * demo_internal.h). */
typedef struct demo_measures {
    /* --bench: a hand-over on this path with nothing else to do, measured
     * before the first frame (ms, median of a run of turns): in lockstep,
     * and pipelined where the path pipelines (else < 0). */
    double handover_ms, handover_pipelined_ms;
    /* --bench: how much of GL's and CUDA's GPU work ran side by side when
     * both were queued (0: the GPU took turns between them, 1: wholly
     * side by side; < 0: not measured), before the first frame. */
    double overlap;
    /* --bench: the frames' wall times summed, and how many (past the first
     * DEMO_WARMUP_FRAMES where the run is longer than twice that, and not
     * the kept one): the mean frame. */
    double wall_sum_ms;
    long wall_frames;
    /* --soak: the wall times of the frames since the last line (ms). */
    double *soak_ms;
    long soak_count;
} demo_measures;

/* The panel and the frame server: live.c's (demo_internal.h: demo__live_*,
 * demo__serve_*). */
typedef struct demo_live {
    cugl_app_ui *ui;       /* the panel; NULL where it is not built or wanted */
    cugl_app_server *server; /* --serve; NULL without */
    bool server_failed;    /* serving a frame failed (said once) */
    bool ui_shown;         /* F1 toggles it */
    bool ui_failed;        /* drawing it failed (said once) */
    float plot[DEMO_PLOT_FRAMES]; /* frame times in ms, oldest first */
    long plot_frame;              /* the timer's frame last plotted */
} demo_live;

typedef struct demo {
    const demo_info *info;
    demo_options opt;
    /* CUDA's devices, each initialized: devices[0] (== device) runs the
     * demo's stream; --devices lists more. Without --compute-device or
     * --devices, the GL GPU alone. */
    cugl_device *devices[DEMO_MAX_DEVICES];
    int device_count;
    cugl_device *device;
    cugl_device *gl_device; /* the GL GPU (--device), where interop memory lives */
    bool remote;            /* a CUDA device is not the GL GPU */
    cugl_stream *stream;    /* on device */
    cugl_module *module;
    cugl_app_context *ctx;
    cugl_app_timer *timer; /* NULL without --bench or the panel */
    demo_live live;        /* the panel and the server: live.c's */
    bool timing;           /* within a timed frame */
    bool timer_failed;     /* a timer call failed (said once) */
    bool headless;
    long frames;            /* frames to render; 0: until the window closes */
    const char *screenshot; /* where the last frame goes; NULL: nowhere */
    /* The last frame is kept (a screenshot): here, or with --mpi on rank 0,
     * whose every rank draws it again when the window closed first. */
    bool keeps_last;
    char default_screenshot[64];
    bool fixed_step; /* frame i shows time i / DEMO_STEP_HZ s */
    /* GL shows CUDA's output a frame late where the path allows (shared
     * memory): --pipelined, or a window running on the clock; never with
     * --record. exact_frame: this frame is kept (a screenshot) and shows
     * its own output, which ends the pipelining. */
    bool pipelined;
    bool exact_frame;
    demo_turns turns;    /* what CUDA's turns did: target.c's */
    demo_measures bench; /* --bench's and --soak's measurements: bench.c's */
    long frame;      /* the frame being rendered, from 0 */
    float time;      /* its time in seconds */
    float dt;        /* seconds since the previous frame */
    int width, height; /* its framebuffer size */
    double start_s;
    GLsync in_flight[DEMO_FRAMES_IN_FLIGHT]; /* a fence after each queued frame */
    /* --record: the pixels of a frame, and where they go. */
    uint8_t *record_pixels;
    size_t record_size;
    demo_recorder recorder;
    /* --mpi (common/demo_mpi.h): the ranks' code and its state; NULL in one
     * process, where rank is 0 of rank_count 1. With --mpi, `info` is
     * rank_info, whose program names the rank ("cugl-nbody[rank 1/4]"). */
    const struct demo_mpi_backend *mpi;
    struct demo_ranks *mpi_state;
    int rank, rank_count;
    int gpus; /* the GPUs the CUDA work runs on: device_count; with --mpi, all ranks' */
    demo_info rank_info;
    char rank_program[96];
} demo;

/* What a demo does each frame. */
typedef struct demo_callbacks {
    /* Once per frame, before render: input and animation state. May be NULL. */
    void (*update)(demo *d, void *user);
    /*
     * Make frame d->frame: CUDA writes, GL draws into the bound framebuffer
     * (viewport set to d->width x d->height). Called once more, for the
     * screenshot, when a window closes before the last frame was read.
     */
    cugl_status (*render)(demo *d, void *user);
    /*
     * --view: the view as numbers. view_get writes at most DEMO_MAX_VIEW
     * and returns how many; view_set takes `count` of them and returns
     * NULL, or why they are no view. Without them, `camera` (if not NULL)
     * is the view (demo_camera_view_get, _set); with neither, the demo has
     * no view.
     */
    cugl_app_camera *camera;
    /* The demo's own widgets in the UI panel (cugl/app_ui.h); may be NULL. */
    void (*panel)(demo *d, void *user, cugl_app_ui *ui);
    int (*view_get)(demo *d, void *user, float *view);
    const char *(*view_set)(demo *d, void *user, const float *view, int count);
} demo_callbacks;

/* A demo's panel callback where the build has the panel, else NULL. */
#if CUGL_APP_HAS_UI
#define DEMO_PANEL(callback) (callback)
#else
#define DEMO_PANEL(callback) NULL
#endif

/**
 * Parse the command line, then set up the devices (device current on this
 * thread), a GL context on the GL GPU, and a stream on device. With CUDA on
 * another GPU the --interop path must reach it: shared through peer memory,
 * or (one device) host; auto picks one and says why. Returns DEMO_RUN to go on, or the exit
 * status (0 after --help; 1 and a message on a failure, a machine without
 * a CUDA GPU included; 2 on a bad command line).
 */
int demo_start(demo *d, const demo_info *info, int argc, char **argv);

/** Load the demo's fatbin (embedded by the build) into d->module. */
cugl_status demo_load_module(demo *d, const unsigned char *fatbin, size_t size);

/** A kernel of d->module; the caller releases it. */
cugl_status demo_kernel(cugl_kernel **out, demo *d, const char *name);

/** Run the frame loop. Returns 0, or 1 after printing what failed. */
int demo_run(demo *d, const demo_callbacks *callbacks, void *user);

/** Print "<program>: <what>: <cugl_last_error()>" on stderr; returns 1. */
int demo_fail(const demo *d, const char *what);

/** Whether a turn on the targets waited on the GPU (cugl_app_target_waits_on_gpu): a GPU
 * time of a phase may then hold GL's work of the frame. */
bool demo_turns_wait_on_gpu(const demo *d);

/** Timer phases (no-ops without --bench, and outside the frame loop). */
void demo_phase_begin(demo *d, int phase, const char *name, bool cuda);

/* qsort's order of doubles, smallest first (--bench's medians). */
int demo_cmp_double(const void *a, const void *b);
void demo_phase_end(demo *d, int phase);

/**
 * The orbit camera as a --view: yaw, pitch, distance, then the target's
 * x, y, z. Get writes 6 numbers and returns 6; set takes 3 (the target
 * kept) or 6 and returns NULL, or why not.
 */
int demo_camera_view_get(const cugl_app_camera *camera, float *view);
const char *demo_camera_view_set(cugl_app_camera *camera, const float *view, int count);
/**
 * Whether cugl_app_camera_update reset the camera this frame (R down or
 * pressed): every frame in which a demo with a home view of its own puts
 * it back. (R held over two frames: the second reset the camera to the
 * library's view.)
 */
bool demo_camera_was_reset(const demo *d);

/** 2-D launch extents covering width x height with 16 x 16 blocks. */
cugl_launch_config demo_grid_2d(int width, int height);

/**
 * Print the timings (--bench), free what demo_start made and return
 * `status`. The demo frees its own GL and CUDA objects first.
 */
int demo_finish(demo *d, int status);

#endif /* CUGL_DEMO_H */
