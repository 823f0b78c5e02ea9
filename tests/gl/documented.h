/*
 * documented.h - every (function, status, condition) the public headers'
 * @errors lists name, as tests/unit/errors_doc.py reads them at build time.
 */
#ifndef CUGL_TEST_DOCUMENTED_H
#define CUGL_TEST_DOCUMENTED_H

#include <stdbool.h>
#include <stddef.h>

#include <cugl/cugl.h>

typedef struct documented_condition {
    const char *function;
    cugl_status status;
    const char *condition; /* the words beside the status; "" where none */
    bool open_ended;       /* "the statuses of what it calls" */
} documented_condition;

extern const documented_condition documented_conditions[];
extern const size_t documented_condition_count;

#endif /* CUGL_TEST_DOCUMENTED_H */
