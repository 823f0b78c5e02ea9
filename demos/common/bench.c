/*
 * bench.c - the demo's measurements: timer phases, --bench's hand-over
 * probe and floor, and --soak's resource lines.
 */
#include "demo_internal.h"

#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

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
double demo__measure_handover(demo *d, bool pipelined)
{
    enum { BATCHES = 5, TURNS = 40 };
    cugl_app_target *tp = NULL;
    bool keep = d->pipelined;
    d->pipelined = pipelined;
    d->handover_probe = true;
    cugl_status st = demo_target_create_buffer(&tp, d, 4096, CUGL_APP_TO_GL, NULL);
    if (st == CUGL_OK && pipelined)
        st = demo_target_pipeline(tp, d);
    if (st == CUGL_OK && pipelined && !cugl_app_target_is_pipelined(tp)) {
        /* This path does not pipeline here (the host path's copies
         * through pinned memory): there is no such hand-over. */
        printf("pipelined hand-over: none on this path here (%s)\n",
               cugl_app_target_reason(tp));
        cugl_app_target_destroy(tp);
        d->pipelined = keep;
        d->handover_probe = false;
        return -1;
    }
    double batch[BATCHES];
    const uint32_t zero = 0;
    /* One batch to warm up, then the ones measured. */
    for (int b = -1; b < BATCHES && st == CUGL_OK; b++) {
        double t0 = demo__now_seconds();
        for (int i = 0; i < TURNS && st == CUGL_OK; i++) {
            demo_io io;
            st = demo_targets_cuda_begin(d, &tp, 1, &io);
            cugl_buffer *word = NULL;
            if (st == CUGL_OK)
                st = cugl_buffer_from_handle(&word, io.dest.ptr, 4, NULL);
            if (st == CUGL_OK)
                st = cugl_buffer_fill(word, &zero, 4, d->stream);
            cugl_buffer_release(word);
            if (st == CUGL_OK)
                st = demo_targets_cuda_end(d, &tp, 1);
            if (st == CUGL_OK)
                st = cugl_app_target_gl_begin(tp);
            if (st == CUGL_OK) {
                glClearNamedBufferSubData(cugl_app_target_gl_name(tp), GL_R32UI, 0, 4,
                                          GL_RED_INTEGER, GL_UNSIGNED_INT, &zero);
                st = cugl_app_target_gl_end(tp);
            }
            glFlush();
        }
        glFinish();
        if (st == CUGL_OK)
            st = cugl_stream_sync(d->stream);
        if (b >= 0)
            batch[b] = (demo__now_seconds() - t0) * 1e3 / TURNS;
    }
    cugl_app_target_destroy(tp);
    d->pipelined = keep;
    d->handover_probe = false;
    if (st != CUGL_OK) {
        fprintf(stderr, "%s: --bench: cannot measure the hand-over: %s\n", d->info->program,
                cugl_last_error());
        return -1;
    }
    qsort(batch, BATCHES, sizeof batch[0], cmp_double);
    return batch[BATCHES / 2];
}

/* The resident host memory of this process in KiB; -1 if unknown. */
static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = -1;
        fclose(f);
    }
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The bytes malloc has handed out and not had back; -1 if unknown. Unlike
 * the resident size, it moves by what is allocated, not by pages. */
static long long heap_bytes(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}

/* The file descriptors this process has open; -1 if unknown. */
static int open_files(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    int n = -1; /* the directory's own descriptor */
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n;
}

/*
 * --soak: one line of what the process holds and how fast it runs, for a
 * long run to show what grows. Device memory is the whole device's (the
 * driver counts no other way): meaningful where the demo runs alone.
 */
void demo__soak_line(demo *d)
{
    qsort(d->soak_ms, (size_t)d->soak_count, sizeof d->soak_ms[0], cmp_double);
    double median = d->soak_count ? d->soak_ms[d->soak_count / 2] : 0;
    size_t free_bytes = 0, total_bytes = 0;
    bool mem = cugl_device_memory_info(d->gl_device, &free_bytes, &total_bytes) == CUGL_OK;
    long long objects = cugl_live_objects(), bytes = cugl_live_bytes();
    double handover = demo__measure_handover(d, false);
    printf("soak: frame %ld: host %ld KiB, heap %lld bytes, %d files, device %.1f MiB used, "
           "cugl %lld objects %lld bytes, frame %.3f ms (median of %ld), hand-over %.3f ms\n",
           d->frame + 1, resident_kib(), heap_bytes(), open_files(),
           mem ? (double)(total_bytes - free_bytes) / (1 << 20) : -1.0, objects, bytes, median,
           d->soak_count, handover);
    fflush(stdout);
    d->soak_count = 0;
}

/* Phases that hand the frame from one API to the other (map, unmap,
 * waits, signals, the host path's copies) or wait for the GPU (present);
 * the others are work. */
static bool handover_phase(int phase)
{
    return phase == DEMO_PHASE_ACQUIRE || phase == DEMO_PHASE_RELEASE ||
           phase == DEMO_PHASE_HANDOFF || phase == DEMO_PHASE_PRESENT;
}

/*
 * --bench: the frame against its floor. Lockstep: GL's GPU work + CUDA's
 * GPU work + one hand-over; pipelined: the larger of the two + one
 * hand-over that nobody waits for; each hand-over as measured before the
 * first frame, the work as the medians of the phases' GPU times.
 */
void demo__print_floor(demo *d)
{
    cugl_app_phase_summary ph[CUGL_APP_TIMER_MAX_PHASES];
    cugl_app_frame_summary fr;
    if (cugl_app_timer_summary(ph, &fr, d->timer) != CUGL_OK || !fr.frames)
        return;
    /* The host path's hand-over phases are copies: its work. */
    bool host = d->opt.interop == CUGL_APP_INTEROP_HOST;
    double gl = 0, cuda = 0, waits = 0;
    for (int p = 0; p < CUGL_APP_TIMER_MAX_PHASES; p++) {
        if (!ph[p].name || !ph[p].samples)
            continue;
        if (p == DEMO_PHASE_PRESENT || (handover_phase(p) && !host))
            waits += ph[p].gpu.median_ms;
        else if (ph[p].cuda)
            cuda += ph[p].gpu.median_ms;
        else
            gl += ph[p].gpu.median_ms;
    }
    /* Pipelined where every turn but the kept frame's was. */
    bool pipelined = d->pipelined && d->handover_pipelined_ms >= 0 && d->lockstep_frames <= 1;
    printf("work (GPU, medians): GL %.3f ms, CUDA %.3f ms%s; hand-over phases %.3f ms "
           "(waiting for the other API included)\n",
           gl, cuda, host ? " (the host copies included)" : "", waits);
    if (d->handover_ms < 0)
        return;
    if (d->gpu_waits) {
        /* A GPU-side wait is timed as part of the work queued after it. */
        printf("floor: not taken: the turns wait on the GPU, and the phases' GPU times "
               "include that waiting (CUGL_APP_CPU_WAITS=1 waits on the CPU)\n"
               "frame: median %.3f ms [p10 %.3f, p90 %.3f]; CPU in no phase %.3f ms\n",
               fr.wall.median_ms, fr.wall.p10_ms, fr.wall.p90_ms, fr.outside.median_ms);
        return;
    }
    double lock = gl + cuda + d->handover_ms;
    printf("hand-over before the first frame: %.3f ms lockstep", d->handover_ms);
    if (d->handover_pipelined_ms >= 0)
        printf(", %.3f ms pipelined (not waited for)", d->handover_pipelined_ms);
    printf("\nfloor: lockstep %.3f ms", lock);
    double floor = lock;
    if (d->handover_pipelined_ms >= 0) {
        double pipe = (gl > cuda ? gl : cuda) + d->handover_pipelined_ms;
        printf(", pipelined %.3f ms", pipe);
        if (pipelined)
            floor = pipe;
    }
    printf("\nframe: median %.3f ms [p10 %.3f, p90 %.3f], %.2fx the %s floor; "
           "CPU in no phase %.3f ms\n",
           fr.wall.median_ms, fr.wall.p10_ms, fr.wall.p90_ms, fr.wall.median_ms / floor,
           pipelined ? "pipelined" : "lockstep", fr.outside.median_ms);
}
