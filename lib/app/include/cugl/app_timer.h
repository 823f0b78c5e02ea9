/**
 * @file cugl/app_timer.h
 * Frame timing: CPU and GPU time of each phase of a frame.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_TIMER_H
#define CUGL_APP_TIMER_H

#include <stdio.h>

#include "cugl/cugl.h"

CUGL_BEGIN_DECLS

/* ---- Frame timing ----------------------------------------------------------- */

/** A per-phase frame timer (cugl_app_timer_create). Opaque. */
typedef struct cugl_app_timer cugl_app_timer;

/** The size of a timer's table of phases. */
enum { CUGL_APP_TIMER_MAX_PHASES = 8 /**< phases a timer measures */ };

/** The phases a target (cugl/app_target.h) times its hand-overs as; a
 * program's own phases take the others (1, 4, 6 and 7). */
enum {
    CUGL_APP_PHASE_ACQUIRE = 0, /**< CUDA's turn begins: map, wait for GL, copy to the device */
    CUGL_APP_PHASE_RELEASE = 2, /**< CUDA's turn ends: unmap, mark for GL, copy to the host */
    CUGL_APP_PHASE_HANDOFF = 3, /**< GL's turn begins: wait for CUDA, or upload */
    CUGL_APP_PHASE_GL_COPY = 5, /**< GL's turn ends: what GL drew copied to where CUDA reads */
};

/**
 * A per-phase frame timer. Each phase measures CPU time (the wall time
 * between begin and end) and GPU time: GL timer queries for GL phases,
 * cugl events on `stream` for CUDA phases. Results are read a few frames
 * late so that timing never stalls the pipeline: a ring of 4 frames, each
 * frame's results collected when its slot comes round again (a result not
 * ready by then is dropped). `stream` may be NULL when no phase is a CUDA
 * phase; the timer holds a reference to it. GL queries are made in the
 * context current at the phase's first use; destroy the timer with that
 * context current.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the timer; NULL on failure.
 * @param stream the stream CUDA phases are timed on, or NULL.
 * @return CUGL_OK; CUGL_ERROR_INVALID_ARGUMENT for NULL out; CUGL_ERROR_OUT_OF_MEMORY.
 */
CUGL_API cugl_status cugl_app_timer_create(cugl_app_timer **out, cugl_stream *stream);
/**
 * Destroy the timer: its GL queries and events, and its reference to the stream.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer, or NULL (no-op).
 */
CUGL_API void cugl_app_timer_destroy(cugl_app_timer *timer);
/**
 * Start a frame (ending one still open).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer; NULL: no-op.
 */
CUGL_API void cugl_app_timer_frame_begin(cugl_app_timer *timer);
/**
 * Phases are numbered 0 .. CUGL_APP_TIMER_MAX_PHASES - 1; the name is
 * copied (NULL keeps the previous one). Each phase is measured at most once
 * a frame. GL phases cannot nest (GL has one GL_TIME_ELAPSED query at a
 * time); CUDA phases may enclose or overlap anything.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, phase out of range, a CUDA
 *   phase without a stream), CUGL_ERROR_INVALID_STATE (outside a frame,
 *   already measured this frame, a GL phase inside another, GL not
 *   loaded), the statuses of cugl_event_create and cugl_event_record.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer.
 * @param phase the phase.
 * @param name the phase's name, or NULL (at the phase's first use, "phase 2" for phase 2).
 * @param cuda true for a CUDA phase (events on the timer's stream), false for a GL phase
 *   (a GL_TIME_ELAPSED query).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_timer_begin(cugl_app_timer *timer, int phase, const char *name,
                                          bool cuda);
/**
 * End a phase that began this frame.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (not begun).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer.
 * @param phase the phase.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_timer_end(cugl_app_timer *timer, int phase);
/**
 * End the frame (and any phase left open).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer; NULL, or no frame begun: no-op.
 */
CUGL_API void cugl_app_timer_frame_end(cugl_app_timer *timer);

/** What a timer measured of one phase (cugl_app_timer_stats). */
typedef struct cugl_app_phase_stats {
    const char *name;     /**< NULL: phase never used */
    bool cuda;            /**< a CUDA phase, else a GL one */
    long samples;         /**< frames with a GPU result */
    double cpu_ms,        /**< mean CPU time in milliseconds, over the frames measured */
        gpu_ms;           /**< mean GPU time in milliseconds, over the samples */
} cugl_app_phase_stats;

/**
 * Means so far; frames counted and their mean wall time from frame_begin to
 * frame_end. Names point into the timer (valid while it lives).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] phases each phase's stats (all 0 for a phase never used), or NULL.
 * @param[out] frames the frames ended so far, or NULL.
 * @param[out] frame_ms their mean wall time in milliseconds, or NULL.
 * @param timer the timer; NULL gives zeros.
 */
CUGL_API void cugl_app_timer_stats(cugl_app_phase_stats phases[CUGL_APP_TIMER_MAX_PHASES],
                                   long *frames, double *frame_ms,
                                   const cugl_app_timer *timer);
/**
 * The newest frame whose results are in (the ring's frames come in a few
 * frames late): each phase's GPU and CPU time in it (0 for a phase not
 * measured that frame, or whose GPU result was dropped) and its wall time
 * from frame_begin to frame_end. Any output may be NULL. Returns that
 * frame's number, counted from 0, or -1 (all 0) while none is in or for a
 * NULL timer. Each frame_begin brings in the next: for a plot of recent
 * frames, such as cugl_app_ui_plot.
 * @errors none.
 * @thread_safety The thread that uses the timer.
 * @param[out] gpu_ms each phase's GPU time in milliseconds, or NULL.
 * @param[out] cpu_ms each phase's CPU time in milliseconds, or NULL.
 * @param[out] frame_ms the frame's wall time in milliseconds, or NULL.
 * @param timer the timer, or NULL.
 * @return the frame's number, or -1.
 */
CUGL_API long cugl_app_timer_last(double gpu_ms[CUGL_APP_TIMER_MAX_PHASES],
                                  double cpu_ms[CUGL_APP_TIMER_MAX_PHASES], double *frame_ms,
                                  const cugl_app_timer *timer);
/** Frames a timer keeps for cugl_app_timer_summary: the newest this many. */
enum { CUGL_APP_TIMER_HISTORY = 65536 /**< collected frames kept */ };

/** A time over frames: its median and its 10th and 90th percentiles
 * (nearest rank). */
typedef struct cugl_app_spread {
    double median_ms; /**< the median, in milliseconds */
    double p10_ms;    /**< the 10th percentile */
    double p90_ms;    /**< the 90th percentile */
} cugl_app_spread;

/** One phase over the frames kept (cugl_app_timer_summary). */
typedef struct cugl_app_phase_summary {
    const char *name;    /**< NULL: phase never used */
    bool cuda;           /**< a CUDA phase, else a GL one */
    long frames;         /**< kept frames the phase ran in */
    long samples;        /**< of those, frames with a GPU result */
    cugl_app_spread cpu; /**< CPU time (begin to end), over `frames` */
    cugl_app_spread gpu; /**< GPU time, over `samples` */
} cugl_app_phase_summary;

/** The frames kept (cugl_app_timer_summary). */
typedef struct cugl_app_frame_summary {
    long frames;             /**< frames kept */
    cugl_app_spread wall;    /**< wall time from frame_begin to frame_end */
    /** The part of the wall time in no phase: the CPU outside every phase
     * (phases that nest or overlap count once). */
    cugl_app_spread outside;
} cugl_app_frame_summary;

/**
 * Medians and spreads over the frames collected so far (the newest
 * CUGL_APP_TIMER_HISTORY; results come in a few frames late, see
 * cugl_app_timer_create). Names point into the timer.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL timer; the outputs are zeroed),
 *   CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the timer.
 * @param[out] phases each phase's summary (all 0 for a phase never used), or NULL.
 * @param[out] frame the frames' summary, or NULL.
 * @param timer the timer.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_timer_summary(
    cugl_app_phase_summary phases[CUGL_APP_TIMER_MAX_PHASES], cugl_app_frame_summary *frame,
    const cugl_app_timer *timer);

/**
 * A table of the summary (cugl_app_timer_summary): each phase's CPU and GPU
 * time (median and 10th to 90th percentile), the CPU time in no phase and
 * the frame's wall time, then frames, mean ms a frame and fps.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param timer the timer; NULL prints nothing.
 * @param out where the table goes; NULL prints nothing.
 */
CUGL_API void cugl_app_timer_print(const cugl_app_timer *timer, FILE *out);

CUGL_END_DECLS

#endif /* CUGL_APP_TIMER_H */
