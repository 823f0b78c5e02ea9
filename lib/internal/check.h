/*
 * check.h - the one way every library of cugl (libcugl, libcugl-app and
 * its frame server, libcugl-mpi) checks its arguments, reports a failure
 * and passes one on.
 *
 *   cugl__fail(status, who, fmt, ...)   records "<who>: <message>" as the
 *       calling thread's last error (cugl_last_error), calls the error
 *       callback, returns status. `who` is the public function the failure
 *       happened in: __func__ there; a helper takes it as its `who`.
 *   CUGL__CHECK_ARG(cond, fmt, ...)     refuses a bad argument
 *       (CUGL_ERROR_INVALID_ARGUMENT), naming __func__;
 *   CUGL__CHECK_NOT_NULL(p)             "p is NULL";
 *   CUGL__TRY(expr)                     passes a failure on as it is (a
 *       helper's, whose message names this function already);
 *   CUGL__TRY_OWN(expr)                 passes on the failure of another
 *       public function (a libcugl call under libcugl-app, say) as this
 *       function's own: its message prefixed with this function's name,
 *       so that a failure always names the public call that was made.
 *
 * libcugl defines cugl__fail itself (error.c, built with
 * CUGL_BUILDING_CORE); the libraries above it reach the same through
 * cugl_report_error, which libcugl exports for them. No library writes to
 * stderr: a program reads the last error, or sets the callbacks it wants
 * (cugl_set_error_callback; libcugl-app's notices: cugl_app_set_message_callback).
 */
#ifndef CUGL_INTERNAL_CHECK_H
#define CUGL_INTERNAL_CHECK_H

#include <stdio.h>
#include <string.h>

#include "cugl/error.h"

#if defined(__GNUC__)
#define CUGL__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CUGL__PRINTF(fmt, args)
#endif

#ifdef CUGL_BUILDING_CORE
cugl_status cugl__fail(cugl_status status, const char *who, const char *fmt, ...)
    CUGL__PRINTF(3, 4);
#else
#define cugl__fail cugl_report_error
#endif

#define CUGL__CHECK_ARG(cond, ...)                                                  \
    do {                                                                            \
        if (!(cond))                                                                \
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, __VA_ARGS__);  \
    } while (0)

#define CUGL__CHECK_NOT_NULL(p) CUGL__CHECK_ARG((p) != NULL, "%s is NULL", #p)

#define CUGL__TRY(expr)                    \
    do {                                   \
        cugl_status cugl__st = (expr);     \
        if (cugl__st != CUGL_OK)           \
            return cugl__st;               \
    } while (0)

#define CUGL__TRY_OWN(expr)                                  \
    do {                                                     \
        cugl_status cugl__st = (expr);                       \
        if (cugl__st != CUGL_OK)                             \
            return cugl__as_own(cugl__st, __func__);         \
    } while (0)

/* `st`, with a failure's message prefixed by `who` where it names another
 * function (a libcugl call's: its message names that call and the
 * driver's), so that a public function's failure names that function. */
static inline cugl_status cugl__as_own(cugl_status st, const char *who)
{
    if (st == CUGL_OK)
        return st;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", cugl_last_error());
    size_t n = strlen(who);
    if (strncmp(msg, who, n) == 0 && msg[n] == ':')
        return st;
    return cugl__fail(st, who, "%s", msg);
}

#endif /* CUGL_INTERNAL_CHECK_H */
