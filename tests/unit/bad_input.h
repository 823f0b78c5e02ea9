/*
 * bad_input.h - the table bad_input_gen.py writes (one row a call of a
 * public function with bad values) and what its calls use.
 */
#ifndef CUGL_TEST_BAD_INPUT_H
#define CUGL_TEST_BAD_INPUT_H

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include <cugl/cugl.h>
#include <dlpack/dlpack.h>

typedef struct bad_input_case {
    const char *function;
    bool returns_status; /* a cugl_status: checked for a message naming the function */
    cugl_status (*call)(void);
    const char *args;    /* the call's arguments, as C */
    /* What the function's header says (its @errors, errors_doc.py): */
    unsigned documented;     /* 1u << each status it may return; ~0u: an open list */
    cugl_status null_status; /* what it returns for a NULL; CUGL_OK: says nothing */
    bool has_null, has_closed; /* the call holds a NULL, a closed object */
} bad_input_case;

extern const bad_input_case bad_input_cases[];
extern const size_t bad_input_count;

/* Zeroed memory for pointer arguments, one region a parameter position. */
void *scratch_at(int slot);

/* The same slot, filled with 0xff bytes now (the call's argument). */
void *scratch_ff(int slot);

/* A string of 1 MiB ('a's), for every string argument. */
const char *huge_string(void);

/* A stream made outside the wrapper under test (its raw CUstream), where a
 * device is; NULL elsewhere. */
void *foreign_stream(void);

/* A closed object of the kind named ("cugl_stream", ...; a view: one of a
 * closed buffer), made once where a device is; NULL elsewhere. */
void *bad_object(const char *kind);

#endif /* CUGL_TEST_BAD_INPUT_H */
