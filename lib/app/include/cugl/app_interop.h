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
#include "cugl/app_shared.h"

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

/**
 * The path that reaches the current context `ctx` from CUDA on the
 * `writers`: the one rule for a program whose kernels run on another GPU
 * than GL's, or on several. `device` is the CUDA device GL runs on (as for
 * cugl_app_choose_interop); a writer that is `device` is no other GPU.
 * With no other GPU among the writers, as cugl_app_choose_interop (or the
 * path asked for, as it is). With others: the shared path, where GL
 * imports CUDA's memory and each of them has a peer path to `device` (the
 * memory is `device`'s; they write it over the link); else, for a single
 * writer, host copies; the map path never (a mapping serves CUDA on GL's
 * device alone). `asked` CUGL_APP_INTEROP_AUTO chooses; another path is
 * checked: the same rule refuses it where it cannot reach GL.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; writer_count outside 0 to
 *   CUGL_APP_SHARED_MAX_WRITERS + 1, or writers NULL with writers to name;
 *   `asked` no cugl_app_interop), CUGL_ERROR_NOT_SUPPORTED (no path
 *   reaches GL from the writers, or the one asked for does not: the
 *   message says why and what would), the statuses of
 *   cugl_device_get_properties.
 * @thread_safety The thread whose current GL context is `ctx`.
 * @param[out] out the path; left as it was on failure.
 * @param[out] reason where the sentence goes: what was chosen and why
 *   (NUL-terminated, cut to fit), or NULL.
 * @param reason_size the bytes of reason; 0 when reason is NULL.
 * @param ctx the context, current on this thread.
 * @param device the CUDA device GL runs on.
 * @param writers the CUDA devices whose kernels write what GL draws; NULL
 *   with 0: `device` alone.
 * @param writer_count how many; 0 to CUGL_APP_SHARED_MAX_WRITERS + 1 (the
 *   memory's own device and the writers shared memory takes besides it).
 * @param asked CUGL_APP_INTEROP_AUTO, or the path to check.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_choose_interop_for(cugl_app_interop *out, char *reason,
                                                 size_t reason_size, cugl_app_context *ctx,
                                                 cugl_device *device,
                                                 cugl_device *const *writers, int writer_count,
                                                 cugl_app_interop asked);

CUGL_END_DECLS

#endif /* CUGL_APP_INTEROP_H */
