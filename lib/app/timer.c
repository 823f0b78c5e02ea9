/*
 * timer.c - per-phase frame timing: CPU wall time, GL timer queries and
 * CUDA events, in a ring of frames whose GPU results are read when their
 * slot comes round again, so that reading never waits for the GPU. Each
 * collected frame is kept (the last CUGL_APP_TIMER_HISTORY) for medians
 * and spreads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_internal.h"

enum { RING = 4, NAME_MAX_LEN = 48 };

typedef struct slot {
    bool pending[CUGL_APP_TIMER_MAX_PHASES]; /* a GPU result is owed */
    bool cuda[CUGL_APP_TIMER_MAX_PHASES];
    long frame;                               /* the frame measured, -1: none */
    double cpu_ms[CUGL_APP_TIMER_MAX_PHASES], frame_ms;
    /* Each phase's CPU interval from the frame's start, for the time in
     * none of them (phases may nest or overlap). */
    double cpu_from[CUGL_APP_TIMER_MAX_PHASES], cpu_to[CUGL_APP_TIMER_MAX_PHASES];
    bool ran[CUGL_APP_TIMER_MAX_PHASES];
    double outside_ms;
    GLuint query[CUGL_APP_TIMER_MAX_PHASES];          /* made on first GL use */
    cugl_event *events[CUGL_APP_TIMER_MAX_PHASES][2]; /* made on first CUDA use */
} slot;

/* One collected frame; NAN where a phase did not run or has no GPU result. */
typedef struct record {
    float cpu[CUGL_APP_TIMER_MAX_PHASES], gpu[CUGL_APP_TIMER_MAX_PHASES];
    float wall, outside;
} record;

typedef struct phase {
    char name[NAME_MAX_LEN];
    bool used, cuda, open;
    double cpu_start, cpu_sum, gpu_sum;
    long cpu_count, gpu_count;
} phase;

struct cugl_app_timer {
    cugl_stream *stream; /* a reference, or NULL */
    slot ring[RING];
    int current;
    bool in_frame;
    int gl_open; /* the open GL phase, -1: none (GL queries cannot nest) */
    double frame_start, frame_sum;
    long frames;
    phase phases[CUGL_APP_TIMER_MAX_PHASES];
    /* The newest frame collected (cugl_app_timer_last). */
    long last_frame;
    double last_gpu[CUGL_APP_TIMER_MAX_PHASES], last_cpu[CUGL_APP_TIMER_MAX_PHASES], last_ms;
    /* The collected frames: a ring of up to CUGL_APP_TIMER_HISTORY,
     * grown as needed; `kept` of them, the newest at (next - 1). */
    record *history;
    long capacity, kept, next;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

CUGL_API cugl_status cugl_app_timer_create(cugl_app_timer **out, cugl_stream *stream)
{
    CUGL__CHECK_NOT_NULL(out);
    *out = NULL;
    cugl_app_timer *t = calloc(1, sizeof *t);
    if (!t)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a timer");
    t->stream = stream ? cugl_stream_retain(stream) : NULL;
    t->gl_open = -1;
    t->last_frame = -1;
    for (int s = 0; s < RING; s++)
        t->ring[s].frame = -1;
    *out = t;
    return CUGL_OK;
}

CUGL_API void cugl_app_timer_destroy(cugl_app_timer *t)
{
    if (!t)
        return;
    for (int s = 0; s < RING; s++)
        for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
            if (t->ring[s].query[p])
                glDeleteQueries(1, &t->ring[s].query[p]);
            cugl_event_release(t->ring[s].events[p][0]);
            cugl_event_release(t->ring[s].events[p][1]);
        }
    cugl_stream_release(t->stream);
    free(t->history);
    free(t);
}

/* Keep a collected frame; on no memory the frame is not kept. */
static void keep(cugl_app_timer *t, const record *r)
{
    if (t->kept == t->capacity && t->capacity < CUGL_APP_TIMER_HISTORY) {
        long cap = t->capacity ? t->capacity * 2 : 256;
        if (cap > CUGL_APP_TIMER_HISTORY)
            cap = CUGL_APP_TIMER_HISTORY;
        record *h = realloc(t->history, (size_t)cap * sizeof *h);
        if (!h)
            return;
        t->history = h;
        t->capacity = cap;
        /* Full until now, so not yet wrapped: the next goes after the last. */
        t->next = t->kept;
    }
    t->history[t->next] = *r;
    t->next = (t->next + 1) % t->capacity;
    if (t->kept < t->capacity)
        t->kept++;
}

/* The GPU time of a phase in a slot; false while the GPU is not done. */
static bool gpu_result(slot *s, int p, double *ms)
{
    if (!s->cuda[p]) {
        GLint available = GL_FALSE;
        glGetQueryObjectiv(s->query[p], GL_QUERY_RESULT_AVAILABLE, &available);
        if (!available)
            return false;
        GLuint64 ns = 0;
        glGetQueryObjectui64v(s->query[p], GL_QUERY_RESULT, &ns);
        *ms = (double)ns * 1e-6;
        return true;
    }
    bool done = false;
    float elapsed = 0;
    if (cugl_event_query(s->events[p][1], &done) != CUGL_OK || !done ||
        cugl_event_elapsed_ms(&elapsed, s->events[p][0], s->events[p][1]) != CUGL_OK)
        return false;
    *ms = elapsed;
    return true;
}

/* Collect what the slot's frame measured, which becomes the newest frame
 * collected; a result still not ready after RING frames is dropped rather
 * than waited for. The slot is then empty for the frame to come. */
static void collect(cugl_app_timer *t, slot *s)
{
    record r;
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        double ms = 0;
        bool have = s->pending[p] && gpu_result(s, p, &ms);
        if (have) {
            t->phases[p].gpu_sum += ms;
            t->phases[p].gpu_count++;
        }
        r.gpu[p] = have ? (float)ms : NAN;
        r.cpu[p] = s->ran[p] ? (float)s->cpu_ms[p] : NAN;
        s->pending[p] = false;
        s->ran[p] = false;
        if (s->frame >= 0) {
            t->last_gpu[p] = ms;
            t->last_cpu[p] = s->cpu_ms[p];
        }
        s->cpu_ms[p] = 0;
    }
    if (s->frame >= 0) {
        t->last_frame = s->frame;
        t->last_ms = s->frame_ms;
        r.wall = (float)s->frame_ms;
        r.outside = (float)s->outside_ms;
        keep(t, &r);
    }
    s->frame = -1;
}

CUGL_API void cugl_app_timer_frame_begin(cugl_app_timer *t)
{
    if (!t)
        return;
    if (t->in_frame)
        cugl_app_timer_frame_end(t);
    t->current = (t->current + 1) % RING;
    collect(t, &t->ring[t->current]);
    t->in_frame = true;
    t->frame_start = now_ms();
}

CUGL_API cugl_status cugl_app_timer_begin(cugl_app_timer *t, int phase_index, const char *name,
                                          bool cuda)
{
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "timer is NULL");
    if (phase_index < 0 || phase_index >= CUGL_APP_TIMER_MAX_PHASES)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "phase %d is outside 0 .. %d",
                          phase_index, CUGL_APP_TIMER_MAX_PHASES - 1);
    phase *ph = &t->phases[phase_index];
    const char *label = name ? name : ph->used ? ph->name : "";
    if (cuda && !t->stream)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "phase %d (\"%s\") is a CUDA phase, but the timer has no stream",
                          phase_index, label);
    if (!cuda && !glad_glCreateQueries)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "GL phase %d (\"%s\"): GL is not loaded (create a context first)",
                          phase_index, label);
    if (!t->in_frame)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "phase %d (\"%s\") begins outside a frame "
                          "(call cugl_app_timer_frame_begin first)",
                          phase_index, label);
    slot *s = &t->ring[t->current];
    if (ph->open || s->pending[phase_index])
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "phase %d (\"%s\") has already %s this frame", phase_index, label,
                          ph->open ? "begun" : "been measured");
    if (!cuda && t->gl_open >= 0)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "GL phase %d (\"%s\") begins while GL phase %d (\"%s\") is open; "
                          "GL timer queries cannot nest",
                          phase_index, label, t->gl_open, t->phases[t->gl_open].name);

    if (cuda) {
        const cugl_event_desc timing = {.timing = true};
        for (int i = 0; i < 2; i++)
            if (!s->events[phase_index][i]) {
                cugl_status st = cugl_event_create(&s->events[phase_index][i],
                                                   cugl_stream_device(t->stream), &timing);
                if (st != CUGL_OK)
                    return cugl__as_own(st, __func__);
            }
        cugl_status st = cugl_event_record(s->events[phase_index][0], t->stream);
        if (st != CUGL_OK)
            return cugl__as_own(st, __func__);
    } else {
        if (!s->query[phase_index])
            glCreateQueries(GL_TIME_ELAPSED, 1, &s->query[phase_index]);
        glBeginQuery(GL_TIME_ELAPSED, s->query[phase_index]);
        t->gl_open = phase_index;
    }
    if (name)
        snprintf(ph->name, sizeof ph->name, "%s", name);
    else if (!ph->used)
        snprintf(ph->name, sizeof ph->name, "phase %d", phase_index);
    ph->used = ph->open = true;
    ph->cuda = cuda;
    s->cuda[phase_index] = cuda;
    ph->cpu_start = now_ms();
    s->cpu_from[phase_index] = ph->cpu_start - t->frame_start;
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_timer_end(cugl_app_timer *t, int phase_index)
{
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "timer is NULL");
    if (phase_index < 0 || phase_index >= CUGL_APP_TIMER_MAX_PHASES)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "phase %d is outside 0 .. %d",
                          phase_index, CUGL_APP_TIMER_MAX_PHASES - 1);
    phase *ph = &t->phases[phase_index];
    if (!ph->open)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__, "phase %d (\"%s\") has not begun",
                          phase_index, ph->name);
    slot *s = &t->ring[t->current];
    ph->open = false;
    double end = now_ms();
    s->cpu_ms[phase_index] = end - ph->cpu_start;
    s->cpu_to[phase_index] = end - t->frame_start;
    s->ran[phase_index] = true;
    ph->cpu_sum += s->cpu_ms[phase_index];
    ph->cpu_count++;
    if (ph->cuda) {
        cugl_status st = cugl_event_record(s->events[phase_index][1], t->stream);
        if (st != CUGL_OK)
            return cugl__as_own(st, __func__);
    } else {
        glEndQuery(GL_TIME_ELAPSED);
        t->gl_open = -1;
    }
    s->pending[phase_index] = true;
    return CUGL_OK;
}

/* The CPU time a slot's frame spent in one phase or more. */
static double phases_union(const slot *s)
{
    double from[CUGL_APP_TIMER_MAX_PHASES], to[CUGL_APP_TIMER_MAX_PHASES];
    int n = 0;
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++)
        if (s->ran[p]) {
            /* Insertion by start. */
            int i = n++;
            while (i > 0 && from[i - 1] > s->cpu_from[p]) {
                from[i] = from[i - 1];
                to[i] = to[i - 1];
                i--;
            }
            from[i] = s->cpu_from[p];
            to[i] = s->cpu_to[p];
        }
    double total = 0, end = -INFINITY;
    for (int i = 0; i < n; i++) {
        double a = from[i] > end ? from[i] : end;
        if (to[i] > a)
            total += to[i] - a;
        if (to[i] > end)
            end = to[i];
    }
    return total;
}

CUGL_API void cugl_app_timer_frame_end(cugl_app_timer *t)
{
    if (!t || !t->in_frame)
        return;
    /* A phase left open ends with its frame. */
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++)
        if (t->phases[p].open)
            cugl_app_timer_end(t, p);
    slot *s = &t->ring[t->current];
    s->frame_ms = now_ms() - t->frame_start;
    s->outside_ms = s->frame_ms - phases_union(s);
    s->frame = t->frames;
    t->frame_sum += s->frame_ms;
    t->frames++;
    t->in_frame = false;
}

CUGL_API void cugl_app_timer_stats(cugl_app_phase_stats phases[CUGL_APP_TIMER_MAX_PHASES],
                                   long *frames, double *frame_ms, const cugl_app_timer *t)
{
    if (frames)
        *frames = t ? t->frames : 0;
    if (frame_ms)
        *frame_ms = t && t->frames ? t->frame_sum / (double)t->frames : 0;
    if (!phases)
        return;
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        const phase *ph = t ? &t->phases[p] : NULL;
        if (!ph || !ph->used) {
            phases[p] = (cugl_app_phase_stats){0};
            continue;
        }
        phases[p] = (cugl_app_phase_stats){
            .name = ph->name,
            .cuda = ph->cuda,
            .samples = ph->gpu_count,
            .cpu_ms = ph->cpu_count ? ph->cpu_sum / (double)ph->cpu_count : 0,
            .gpu_ms = ph->gpu_count ? ph->gpu_sum / (double)ph->gpu_count : 0,
        };
    }
}

CUGL_API long cugl_app_timer_last(double gpu_ms[CUGL_APP_TIMER_MAX_PHASES],
                                  double cpu_ms[CUGL_APP_TIMER_MAX_PHASES], double *frame_ms,
                                  const cugl_app_timer *t)
{
    bool have = t && t->last_frame >= 0;
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        if (gpu_ms)
            gpu_ms[p] = have ? t->last_gpu[p] : 0;
        if (cpu_ms)
            cpu_ms[p] = have ? t->last_cpu[p] : 0;
    }
    if (frame_ms)
        *frame_ms = have ? t->last_ms : 0;
    return have ? t->last_frame : -1;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The spread of the n values in v (sorted in place, NANs dropped first);
 * the number of values it was taken over. */
static long spread_of(float *v, long n, cugl_app_spread *out)
{
    long m = 0;
    for (long i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[m++] = v[i];
    *out = (cugl_app_spread){0};
    if (m == 0)
        return 0;
    qsort(v, (size_t)m, sizeof *v, cmp_float);
    /* Nearest rank. */
    out->p10_ms = v[(m - 1) / 10];
    out->median_ms = m % 2 ? v[m / 2] : 0.5 * ((double)v[m / 2 - 1] + v[m / 2]);
    out->p90_ms = v[(m - 1) - (m - 1) / 10];
    return m;
}

CUGL_API cugl_status cugl_app_timer_summary(cugl_app_phase_summary phases[CUGL_APP_TIMER_MAX_PHASES],
                                            cugl_app_frame_summary *frame,
                                            const cugl_app_timer *t)
{
    if (phases)
        memset(phases, 0, sizeof *phases * CUGL_APP_TIMER_MAX_PHASES);
    if (frame)
        *frame = (cugl_app_frame_summary){0};
    if (!t)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "timer is NULL");
    long n = t->kept;
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for %ld frames", n);
    if (frame) {
        frame->frames = n;
        for (long i = 0; i < n; i++)
            v[i] = t->history[i].wall;
        spread_of(v, n, &frame->wall);
        for (long i = 0; i < n; i++)
            v[i] = t->history[i].outside;
        spread_of(v, n, &frame->outside);
    }
    for (int p = 0; phases && p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        const phase *ph = &t->phases[p];
        if (!ph->used)
            continue;
        phases[p].name = ph->name;
        phases[p].cuda = ph->cuda;
        for (long i = 0; i < n; i++)
            v[i] = t->history[i].cpu[p];
        phases[p].frames = spread_of(v, n, &phases[p].cpu);
        for (long i = 0; i < n; i++)
            v[i] = t->history[i].gpu[p];
        phases[p].samples = spread_of(v, n, &phases[p].gpu);
    }
    free(v);
    return CUGL_OK;
}

static void print_spread(FILE *out, const cugl_app_spread *s, long n)
{
    if (n)
        fprintf(out, " %8.3f [%7.3f %7.3f]", s->median_ms, s->p10_ms, s->p90_ms);
    else
        fprintf(out, " %8s  %7s %7s ", "-", "", "");
}

CUGL_API void cugl_app_timer_print(const cugl_app_timer *t, FILE *out)
{
    if (!t || !out)
        return;
    long frames;
    double frame_ms;
    cugl_app_timer_stats(NULL, &frames, &frame_ms, t);
    cugl_app_phase_summary ph[CUGL_APP_TIMER_MAX_PHASES];
    cugl_app_frame_summary fr;
    if (cugl_app_timer_summary(ph, &fr, t) != CUGL_OK)
        return;
    fprintf(out, "%-16s %-4s %26s %26s %7s\n", "phase", "api", "cpu ms median [p10 p90]",
            "gpu ms median [p10 p90]", "samples");
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        if (!ph[p].name)
            continue;
        fprintf(out, "%-16s %-4s", ph[p].name, ph[p].cuda ? "cuda" : "gl");
        print_spread(out, &ph[p].cpu, ph[p].frames);
        print_spread(out, &ph[p].gpu, ph[p].samples);
        fprintf(out, " %7ld\n", ph[p].samples);
    }
    fprintf(out, "%-16s %-4s", "in no phase", "cpu");
    print_spread(out, &fr.outside, fr.frames);
    fputc('\n', out);
    fprintf(out, "%-16s %-4s", "frame", "wall");
    print_spread(out, &fr.wall, fr.frames);
    fprintf(out, "  (%ld frames kept)\n", fr.frames);
    fprintf(out, "%ld frames, %.3f ms a frame", frames, frame_ms);
    if (frame_ms > 0)
        fprintf(out, " (%.1f fps)", 1e3 / frame_ms);
    fputc('\n', out);
}
