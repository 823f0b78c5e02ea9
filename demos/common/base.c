/*
 * base.c - what every file of a demo uses and nothing of it calls back: the
 * clock, the last failure (said once, on stderr), and the timer's phases.
 */
#include "demo_internal.h"

#include <stdio.h>
#include <time.h>

double demo__now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char last_failure[1024];

const char *demo__last_failure(void)
{
    return last_failure;
}

int demo_fail(const demo *d, const char *what)
{
    snprintf(last_failure, sizeof last_failure, "%s: %s", what, cugl_last_error());
    fprintf(stderr, "%s: %s\n", d->info->program, last_failure);
    return 1;
}

/* Timing is a side line: a refusal is reported once and the frame goes on. */
static void timer_result(demo *d, cugl_status st)
{
    if (st != CUGL_OK && !d->timer_failed) {
        fprintf(stderr, "%s: frame timer: %s\n", d->info->program, cugl_last_error());
        d->timer_failed = true;
    }
}

void demo_phase_begin(demo *d, int phase, const char *name, bool cuda)
{
    if (d->timing)
        timer_result(d, cugl_app_timer_begin(d->timer, phase, name, cuda));
}

void demo_phase_end(demo *d, int phase)
{
    if (d->timing)
        timer_result(d, cugl_app_timer_end(d->timer, phase));
}
