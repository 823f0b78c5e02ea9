/*
 * fault_shim.h - a CUDA driver library for the tests that forwards to the
 * real one (libcuda.so.1, or $CUGL_FAULT_REAL) and fails a chosen call on
 * request. Load it with CUGL_LIBCUDA=<path to libcuda_fault.so>: libcugl
 * takes cuGetProcAddress from it, and every entry point it resolves
 * through that (the rows of lib/core/driver.h) comes back wrapped.
 *
 * The environment chooses the failure, read at the first wrapped call:
 *
 *   CUGL_FAULT_CALL=N          fail the N-th wrapped call (from 1)
 *   CUGL_FAULT_FUNC=cuXxx      or: fail a call of cuXxx ...
 *   CUGL_FAULT_SITE=FILE+0xOFF or: fail a call made from that call site
 *                              (the calling library's file name and the
 *                              return address's offset in it, as the log
 *                              writes it) ...
 *   CUGL_FAULT_OCCURRENCE=K    ... the K-th one (default 1)
 *   CUGL_FAULT_RESULT=R        with R: oom (the default), invalid, launch,
 *                              not_permitted, unknown, or a CUresult number
 *   CUGL_FAULT_LOG=FILE        at exit, write what happened to FILE ("%p"
 *                              in it: the process id, one log each)
 *
 * Calls of cuGetErrorName and cuGetErrorString (the error messages' own)
 * are never failed nor counted, nor are calls while the program has
 * disarmed the shim (cugl_fault_arm(0); armed at the start). The log: "calls N" (the wrapped calls
 * counted), then, where a call was failed, "failed <name> <call number>
 * <caller>", the caller as the calling library's file and offset (one
 * call site each); then a line "site <caller> <name> <calls>" for every
 * call site seen, and "sites-full" where there were too many to keep.
 */
#ifndef CUGL_TEST_FAULT_SHIM_H
#define CUGL_TEST_FAULT_SHIM_H

#include <stdbool.h>

#include "driver.h"

typedef void (*fault_fn)(void);

typedef struct fault_entry {
    const char *name;
    fault_fn wrapper;
} fault_entry;

/* The generated table (gen_shim.py): one entry per driver.h row. */
extern const fault_entry fault_entries[];
extern const int fault_entry_count;
/* The real entry points, as resolved (fault_fn: ISO C converts between
 * function pointer types, not from void *). */
extern fault_fn fault_real[];

/* Count the call of entry `index` from `caller`; true (and *result set)
 * when it is the one to fail. */
bool fault_hit(int index, void *caller, CUresult *result);

/* For the programs driven under the shim (dlsym on the shim's handle):
 * the name of the entry point failed so far, or NULL; the count of wrapped
 * calls; and whether calls count (and may fail) from now on. */
const char *cugl_fault_failed(void);
long cugl_fault_calls(void);
void cugl_fault_arm(int on);

#endif /* CUGL_TEST_FAULT_SHIM_H */
