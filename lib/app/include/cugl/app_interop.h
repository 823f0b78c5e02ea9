/**
 * @file cugl/app_interop.h
 * Which interop path reaches GL from CUDA here.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_INTEROP_H
#define CUGL_APP_INTEROP_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/* ---- Which interop path ------------------------------------------------------ */

/**
 * The interop paths, one row each: the name after CUGL_APP_INTEROP_, its
 * value, its name in words (cugl_app_interop_name, a command line's
 * --interop) and one line about it. A new path is a row here, a table of
 * functions of its own (lib/app/interop/target_*.c), and nothing else.
 */
#define CUGL_APP_INTEROP_LIST(X)                                                              \
    X(AUTO, 0, "auto", "the fastest that works here (cugl_app_choose_interop)")              \
    X(MAP, 1, "map", "register the GL object, map it each frame")                            \
    X(SHARED, 2, "shared", "CUDA memory imported by GL, no mapping")                         \
    X(HOST, 3, "host", "through pinned host memory and a GL upload")

/**
 * How CUDA's output reaches GL (cugl_app_choose_interop tries shared, then
 * map, then host): CUGL_APP_INTEROP_AUTO (0), CUGL_APP_INTEROP_MAP,
 * CUGL_APP_INTEROP_SHARED, CUGL_APP_INTEROP_HOST, as CUGL_APP_INTEROP_LIST
 * says.
 */
typedef enum cugl_app_interop {
    /** @cond */
#define CUGL__APP_INTEROP_ENUM(id, value, name, help) CUGL_APP_INTEROP_##id = value,
    CUGL_APP_INTEROP_LIST(CUGL__APP_INTEROP_ENUM)
#undef CUGL__APP_INTEROP_ENUM
    /** @endcond */
} cugl_app_interop;

/**
 * "auto", "map", "shared", "host", or "invalid". @thread_safety Any thread.
 * @param interop the path.
 * @return a static string; "invalid" for a value that is no cugl_app_interop.
 */
CUGL_API const char *cugl_app_interop_name(cugl_app_interop interop);

/**
 * The path a name names: cugl_app_interop_name the other way ("auto",
 * "map", "shared", "host"), for a program's own --interop flag.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a name of no path: the
 *   message lists the names).
 * @thread_safety Any thread.
 * @param[out] out the path; left as it was on failure.
 * @param name the path's name, as cugl_app_interop_name gives it.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_interop_from_name(cugl_app_interop *out, const char *name);

/**
 * The fastest path that works between `device` and the current context
 * `ctx`, found by trying each on a small object: shared memory where GL
 * runs on the device and imports its memory, else map where CUDA registers
 * GL's objects, else host copies (GL on Mesa, on another GPU, under WSL).
 * `reason` (reason_size bytes; NULL with 0 for none) gets one sentence
 * for the user: what was chosen and why, naming what refused. Nothing of
 * the probes is left behind.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), the statuses of
 *   cugl_device_get_properties. A path that does not work is no error.
 * @thread_safety The thread whose current GL context is `ctx`.
 * @param[out] out the path chosen.
 * @param[out] reason where the sentence goes (NUL-terminated, cut to fit), or NULL.
 * @param reason_size the bytes of reason; 0 when reason is NULL.
 * @param ctx the context, current on this thread.
 * @param device the CUDA device whose output GL draws.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_choose_interop(cugl_app_interop *out, char *reason,
                                             size_t reason_size, cugl_app_context *ctx,
                                             cugl_device *device);

CUGL_END_DECLS

#endif /* CUGL_APP_INTEROP_H */
