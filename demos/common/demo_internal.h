/*
 * demo_internal.h - what the files of the demos' common code share (demo.c,
 * devices.c, live.c, loop.c, bench.c); the demos see demo.h alone.
 */
#ifndef CUGL_DEMO_INTERNAL_H
#define CUGL_DEMO_INTERNAL_H

#include <signal.h>

#include "demo.h"
#include "demo_mpi.h"
#include "target.h"

#if CUGL_APP_HAS_UI
#include <cugl/app_ui.h>
#endif
#if CUGL_APP_HAS_SERVE
#include <cugl/app_serve.h>
#endif

/* demo.c: a monotonic clock. */
double demo__now_seconds(void);
/* What the last demo_fail said, less the program's name ("" before any). */
const char *demo__last_failure(void);

/* devices.c */
/* The GL GPU of --device and CUDA's devices, the first made current;
 * DEMO_RUN or the exit status. */
int demo__set_up_devices(demo *d);
/*
 * CUDA on GPUs other than the GL GPU: which paths reach GL from there. The
 * map path maps for the GL GPU only; shared memory needs a peer path from
 * each device to the GL GPU; host copies suit one device. Writes why not
 * into `why` and returns false.
 */
bool demo__path_reaches_gl(demo *d, demo_interop path, char *why, size_t size);
/* --interop auto: the fastest path this context and CUDA's devices share,
 * and why. */
int demo__choose_interop(demo *d);
/* Where CUDA runs, when not on the GL GPU alone. */
void demo__print_devices(demo *d);

/* live.c */
/* SIGINT or SIGTERM while serving (or with --mpi): finish the frame, then
 * exit cleanly. */
extern volatile sig_atomic_t demo__stop_asked;
/* Set demo__stop_asked on SIGINT and SIGTERM from now on. */
void demo__stop_on_signals(void);
/* The UI panel: in windows, and headless with --ui. */
int demo__set_up_panel(demo *d);
/* Whether there is a panel. */
bool demo__live_panel(const demo *d);
/* F1 hides and shows the panel. */
void demo__live_keys(demo *d);
/* The panel over the finished frame, where there is one and it is shown:
 * the demo's path and size, the frame phases of the last timed frame with
 * a plot of frame times, and the demo's own widgets. */
void demo__draw_panel(demo *d, const demo_callbacks *cb, void *user);

/* --serve: the frames to web browsers, their input back. */
int demo__set_up_server(demo *d);
/* The frame to the viewers where there are, with the timer's phases as the
 * page's text (timed as the --mpi exchange's phase where there is none). */
void demo__serve_frame(demo *d);
/* The panel and the server ended. */
void demo__live_end(demo *d);

/* --input replays a file of events; --save-input records this run's. */
int demo__set_up_input(demo *d);
/* A served headless demo (no vsync, no --bench) shows DEMO_SERVE_HZ frames
 * a second, not as many as the GPU makes; others are not paced here. */
void demo__serve_pace(demo *d, double *next_s);

/* bench.c */
/*
 * A hand-over on this run's path with almost nothing else to do: a small
 * scratch target, turn after turn as a frame takes it (CUDA takes it,
 * fills a word, gives it back; GL takes it, clears a word, gives it back),
 * the turns queued as fast as they are accepted and then waited for. A
 * turn's cost is the batch's wall time over its turns; the median of 5
 * batches. In lockstep each turn waits for the last one's GL work;
 * pipelined (shared memory), nobody waits in the steady state. -1 where it
 * cannot be measured.
 */
double demo__measure_handover(demo *d, bool pipelined);
/* --bench: the part of the shorter of two pieces of GPU work, one GL's and one
 * CUDA's, that runs beside the other when both are queued (0 to 1); < 0
 * where it cannot be measured (said on stderr). */
double demo__measure_overlap(demo *d);
/*
 * --soak: one line of what the process holds and how fast it runs, for a
 * long run to show what grows. Device memory is the whole device's (the
 * driver counts no other way): meaningful where the demo runs alone.
 */
void demo__soak_line(demo *d);
/*
 * --bench: the frame against its floor. Lockstep: GL's GPU work + CUDA's
 * GPU work + one hand-over; pipelined: the larger of the two + one
 * hand-over that nobody waits for; each hand-over as measured before the
 * first frame, the work as the medians of the phases' GPU times.
 */
void demo__print_floor(demo *d);
/* --bench's and --soak's run: the hand-over and overlap probes before the
 * first frame and the counts reset (with --bench), the frame times' room
 * (with --soak); 0, or the exit status of a failure. */
int demo__bench_start(demo *d);
/* A frame took frame_ms; `counted`: it counts toward --bench's mean (past
 * the warm-up, not the kept frame). With --soak, a line every opt.soak. */
void demo__bench_frame(demo *d, double frame_ms, bool counted);
/* What the measurements hold, freed. */
void demo__bench_end(demo *d);

/* target.c: what CUDA's turns did. The hand-over probe runs (its scratch
 * target pipelines where the path can, and is not timed); lockstep turns
 * count from here; how many frames had one. */
void demo__turns_probe(demo *d, bool probing);
void demo__turns_count_from_here(demo *d);
long demo__turns_lockstep_frames(const demo *d);

#endif /* CUGL_DEMO_INTERNAL_H */
