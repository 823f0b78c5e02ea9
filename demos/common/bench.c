/*
 * bench.c - the demo's measurements: --bench's hand-over probe and floor,
 * and --soak's resource lines (the timer's phases: base.c).
 */
#include "demo_internal.h"

#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SOAK_KEPT = 1 << 16 }; /* --soak: frame times kept for a line's median */

int demo_cmp_double(const void *a, const void *b)
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
    demo__turns_probe(d, true);
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
        demo__turns_probe(d, false);
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
    demo__turns_probe(d, false);
    if (st != CUGL_OK) {
        fprintf(stderr, "%s: --bench: cannot measure the hand-over: %s\n", d->info->program,
                cugl_last_error());
        return -1;
    }
    qsort(batch, BATCHES, sizeof batch[0], demo_cmp_double);
    return batch[BATCHES / 2];
}

/*
 * --bench: do GL's and CUDA's GPU work run side by side? A chain of
 * dependent multiply-adds on each side (one warp of CUDA, one workgroup of
 * a GL compute shader: a small part of the GPU, so that nothing but the
 * two contexts' scheduling keeps them apart), each about OVERLAP_MS alone;
 * then both queued at once. Taking turns, both take the sum of the two;
 * side by side, the longer alone. Each figure is the fastest of
 * OVERLAP_RUNS runs (other work on the GPU, other tests' among them, only
 * ever adds to a run) less that of a run with (almost) no work, which
 * carries the launches and waits. Where a side's work then reads as far
 * from the time it was sized to (none at all, or other work came and went
 * between the sizing and the measure: on a GPU shared with other tests GL
 * sized to 1 ms has read as 0.044), the measurement is tried again, up to
 * OVERLAP_TRIES times; then --bench says that it could not measure, and
 * the floor takes the two as running side by side.
 */
enum { OVERLAP_RUNS = 7, OVERLAP_TRIES = 3 };
#define OVERLAP_MS 1.0

/* One warp: n dependent multiply-adds, the result to *out. */
static const char spin_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry cugl_demo_spin(.param .u64 p_out, .param .u32 p_n)\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .f32 %f<2>;\n"
    "    .reg .b32 %r<3>;\n"
    "    .reg .b64 %rd<3>;\n"
    "    ld.param.u64 %rd1, [p_out];\n"
    "    ld.param.u32 %r1, [p_n];\n"
    "    mov.f32 %f1, 0f3F800000;\n"
    "    mov.u32 %r2, 0;\n"
    "    setp.eq.u32 %p1, %r1, 0;\n"
    "    @%p1 bra DONE;\n"
    "LOOP:\n"
    "    fma.rn.f32 %f1, %f1, 0f3F7FFFEF, 0f3A83126F;\n"
    "    add.u32 %r2, %r2, 1;\n"
    "    setp.lt.u32 %p1, %r2, %r1;\n"
    "    @%p1 bra LOOP;\n"
    "DONE:\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    st.global.f32 [%rd2], %f1;\n"
    "    ret;\n"
    "}\n";

/* The same in GL. */
static const char spin_glsl[] = "#version 430\n"
                                "layout(local_size_x = 32) in;\n"
                                "layout(std430, binding = 0) buffer Out { float v[]; };\n"
                                "uniform uint n;\n"
                                "void main()\n"
                                "{\n"
                                "    float f = 1.0;\n"
                                "    for (uint i = 0u; i < n; i++)\n"
                                "        f = fma(f, 0.9999999, 0.001);\n"
                                "    if (gl_LocalInvocationIndex == 0u)\n"
                                "        v[0] = f;\n"
                                "}\n";

typedef struct spin {
    cugl_module *module;
    cugl_kernel *kernel;
    cugl_memory_resource *mr;
    cugl_buffer *out;
    uint32_t program, buffer;
    int n_location;
} spin;

/* One run: n multiply-adds on each side (0: none queued); its wall time in
 * ms, or < 0 on failure. */
static double spin_run(demo *d, spin *s, uint32_t cuda_n, uint32_t gl_n)
{
    double t0 = demo__now_seconds();
    if (cuda_n) {
        uint64_t out = cugl_buffer_handle(s->out);
        void *args[] = {&out, &cuda_n};
        cugl_launch_config cfg = {.grid = {1, 1, 1}, .block = {32, 1, 1}};
        if (cugl_launch(d->stream, &cfg, s->kernel, args, 2) != CUGL_OK)
            return -1;
    }
    if (gl_n) {
        glUseProgram(s->program);
        glUniform1ui(s->n_location, gl_n);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, s->buffer);
        glDispatchCompute(1, 1, 1);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
        glUseProgram(0);
        glFlush();
    }
    if (cugl_stream_sync(d->stream) != CUGL_OK)
        return -1;
    glFinish();
    return (demo__now_seconds() - t0) * 1e3;
}

/* The fastest of OVERLAP_RUNS runs; < 0 on failure. */
static double spin_fastest(demo *d, spin *s, uint32_t cuda_n, uint32_t gl_n)
{
    double fastest = -1;
    for (int i = 0; i < OVERLAP_RUNS; i++) {
        double t = spin_run(d, s, cuda_n, gl_n);
        if (t < 0)
            return -1;
        if (fastest < 0 || t < fastest)
            fastest = t;
    }
    return fastest;
}

/* n scaled so that a run of n takes about OVERLAP_MS, from a run of n0
 * that took `ms` beyond `empty`. */
static uint32_t spin_scale(uint32_t n0, double ms, double empty)
{
    double work = ms - empty, n = work > 0.01 ? n0 * (OVERLAP_MS / work) : n0 * 100.0;
    return n < 1024 ? 1024 : n > 1e9 ? 1000000000u : (uint32_t)n;
}

/* Whether a side sized to OVERLAP_MS took about that (a quarter to four
 * times): what then reads as overlap is the two sides', not other work's. */
static bool spin_held(double ms)
{
    return ms >= OVERLAP_MS / 4 && ms <= OVERLAP_MS * 4;
}

double demo__measure_overlap(demo *d)
{
    spin s = {0};
    double overlap = -1;
    const char *why = NULL;
    if (cugl_module_load_data(&s.module, d->device, spin_ptx, sizeof spin_ptx) != CUGL_OK ||
        cugl_module_get_kernel(&s.kernel, s.module, "cugl_demo_spin") != CUGL_OK ||
        cugl_device_memory_resource_create(&s.mr, d->device, NULL) != CUGL_OK ||
        cugl_memory_resource_allocate(&s.out, s.mr, 4, d->stream) != CUGL_OK)
        why = cugl_last_error();
    else if (cugl_app_compute_program(&s.program, "overlap probe", spin_glsl) != CUGL_OK)
        why = cugl_last_error();
    double cuda = 0, gl = 0, both = 0;
    bool held = false;
    if (!why) {
        s.n_location = glGetUniformLocation(s.program, "n");
        glCreateBuffers(1, &s.buffer);
        glNamedBufferData(s.buffer, 4, NULL, GL_DYNAMIC_DRAW);
    }
    for (int try = 0; !why && try < OVERLAP_TRIES && !held; try++) {
        /* Warm both up, then size each side's work to about OVERLAP_MS. */
        const uint32_t n0 = 1u << 16;
        double empty = spin_fastest(d, &s, 1, 1);
        double c0 = spin_fastest(d, &s, n0, 1), g0 = spin_fastest(d, &s, 1, n0);
        uint32_t cn = spin_scale(n0, c0, empty), gn = spin_scale(n0, g0, empty);
        empty = spin_fastest(d, &s, 1, 1);
        cuda = spin_fastest(d, &s, cn, 1) - empty;
        gl = spin_fastest(d, &s, 1, gn) - empty;
        both = spin_fastest(d, &s, cn, gn) - empty;
        if (empty < 0 || c0 < 0 || g0 < 0 || cuda + empty < 0 || gl + empty < 0 ||
            both + empty < 0)
            why = cugl_last_error();
        held = spin_held(cuda) && spin_held(gl);
    }
    char held_why[160];
    if (!why && !held) {
        snprintf(held_why, sizeof held_why,
                 "the work's time did not hold still (each side sized to %.1f ms, then GL took "
                 "%.3f ms and CUDA %.3f ms: the GPU busy with other work?)",
                 OVERLAP_MS, gl, cuda);
        why = held_why;
    }
    if (!why) {
        double shorter = cuda < gl ? cuda : gl;
        overlap = (cuda + gl - both) / shorter;
        overlap = overlap < 0 ? 0 : overlap > 1 ? 1 : overlap;
        printf("GL and CUDA side by side: %.1f%% of the shorter overlapped (alone: GL %.3f "
               "ms, CUDA %.3f ms; both queued: %.3f ms)\n",
               overlap * 100, gl, cuda, both);
    } else {
        printf("GL and CUDA side by side: not measured: %s; the floor takes them as running "
               "side by side\n",
               why);
    }
    if (s.buffer)
        glDeleteBuffers(1, &s.buffer);
    if (s.program)
        glDeleteProgram(s.program);
    cugl_buffer_release(s.out);
    cugl_memory_resource_release(s.mr);
    cugl_kernel_release(s.kernel);
    cugl_module_release(s.module);
    return overlap;
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
    qsort(d->bench.soak_ms, (size_t)d->bench.soak_count, sizeof d->bench.soak_ms[0],
          demo_cmp_double);
    double median = d->bench.soak_count ? d->bench.soak_ms[d->bench.soak_count / 2] : 0;
    size_t free_bytes = 0, total_bytes = 0;
    bool mem = cugl_device_memory_info(d->gl_device, &free_bytes, &total_bytes) == CUGL_OK;
    long long objects = cugl_live_objects(), bytes = cugl_live_bytes();
    double handover = demo__measure_handover(d, false);
    printf("soak: frame %ld: host %ld KiB, heap %lld bytes, %d files, device %.1f MiB used, "
           "cugl %lld objects %lld bytes, frame %.3f ms (median of %ld), hand-over %.3f ms\n",
           d->frame + 1, resident_kib(), heap_bytes(), open_files(),
           mem ? (double)(total_bytes - free_bytes) / (1 << 20) : -1.0, objects, bytes, median,
           d->bench.soak_count, handover);
    fflush(stdout);
    d->bench.soak_count = 0;
}

/* Phases that hand the frame from one API to the other (map, unmap,
 * waits, signals, the host path's copies) or wait for the GPU (present);
 * the others are work. */
static bool handover_phase(int phase)
{
    return phase == DEMO_PHASE_ACQUIRE || phase == DEMO_PHASE_RELEASE ||
           phase == DEMO_PHASE_HANDOFF || phase == DEMO_PHASE_PRESENT;
}

/* The frame --bench sets against its floor: the mean where frames were
 * counted (demo_run), else the timer's median. Pipelined frames alternate
 * between short and long (which turn waits depends on where the CPU got
 * ahead), so that the median frame of a run lands on either side. */
static double mean_frame_ms(const demo *d, const cugl_app_frame_summary *fr)
{
    return d->bench.wall_frames ? d->bench.wall_sum_ms / d->bench.wall_frames : fr->wall.median_ms;
}

/*
 * --bench: the frame against its floor. Lockstep: GL's GPU work + CUDA's
 * GPU work + one hand-over; pipelined: the larger of the two, the part of
 * the smaller that cannot run beside it (the overlap measured before the
 * first frame: on one GPU the two contexts take turns, and none can), and
 * one hand-over that nobody waits for; each hand-over as measured before
 * the first frame, the work as the medians of the phases' GPU times. The
 * frame is the mean over the frames past the first DEMO_WARMUP_FRAMES but
 * the kept one.
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
    bool pipelined =
        d->pipelined && d->bench.handover_pipelined_ms >= 0 && demo__turns_lockstep_frames(d) <= 1;
    printf("work (GPU, medians): GL %.3f ms, CUDA %.3f ms%s; hand-over phases %.3f ms "
           "(waiting for the other API included)\n",
           gl, cuda, host ? " (the host copies included)" : "", waits);
    if (d->bench.handover_ms < 0)
        return;
    if (demo_turns_wait_on_gpu(d)) {
        /* A GPU-side wait is timed as part of the work queued after it. */
        printf("floor: not taken: the turns wait on the GPU, and the phases' GPU times "
               "include that waiting (CUGL_APP_CPU_WAITS=1 waits on the CPU)\n"
               "frame: median %.3f ms [p10 %.3f, p90 %.3f], mean %.3f ms; CPU in no phase "
               "%.3f ms\n",
               fr.wall.median_ms, fr.wall.p10_ms, fr.wall.p90_ms, mean_frame_ms(d, &fr),
               fr.outside.median_ms);
        return;
    }
    double lock = gl + cuda + d->bench.handover_ms;
    printf("hand-over before the first frame: %.3f ms lockstep", d->bench.handover_ms);
    if (d->bench.handover_pipelined_ms >= 0)
        printf(", %.3f ms pipelined (not waited for)", d->bench.handover_pipelined_ms);
    printf("\nfloor: lockstep %.3f ms", lock);
    double floor = lock;
    if (d->bench.handover_pipelined_ms >= 0) {
        /* The longer side's work, the part of the shorter's that does not
         * run beside it, and a hand-over. */
        double longer = gl > cuda ? gl : cuda, shorter = gl > cuda ? cuda : gl;
        double overlap = d->bench.overlap >= 0 ? d->bench.overlap : 1;
        double pipe = longer + (1 - overlap) * shorter + d->bench.handover_pipelined_ms;
        printf(", pipelined %.3f ms", pipe);
        if (pipelined)
            floor = pipe;
    }
    double mean = mean_frame_ms(d, &fr);
    printf("\nframe: median %.3f ms [p10 %.3f, p90 %.3f], mean %.3f ms, %.2fx the %s floor; "
           "CPU in no phase %.3f ms\n",
           fr.wall.median_ms, fr.wall.p10_ms, fr.wall.p90_ms, mean, mean / floor,
           pipelined ? "pipelined" : "lockstep", fr.outside.median_ms);
}

int demo__bench_start(demo *d)
{
    demo_measures *m = &d->bench;
    m->handover_ms = m->handover_pipelined_ms = m->overlap = -1;
    m->wall_sum_ms = 0;
    m->wall_frames = 0;
    if (d->opt.bench) {
        m->handover_ms = demo__measure_handover(d, false);
        if (!d->remote) /* -1 where the path does not pipeline */
            m->handover_pipelined_ms = demo__measure_handover(d, true);
        if (m->handover_pipelined_ms >= 0)
            m->overlap = demo__measure_overlap(d);
        /* The frames count from here. */
        demo__turns_count_from_here(d);
    }
    if (d->opt.soak) {
        long n = d->opt.soak < SOAK_KEPT ? d->opt.soak : SOAK_KEPT;
        m->soak_ms = malloc((size_t)n * sizeof *m->soak_ms);
        if (!m->soak_ms)
            return demo_fail(d, "--soak: out of host memory");
    }
    return 0;
}

void demo__bench_frame(demo *d, double frame_ms, bool counted)
{
    demo_measures *m = &d->bench;
    if (d->opt.bench && counted) {
        m->wall_sum_ms += frame_ms;
        m->wall_frames++;
    }
    if (m->soak_ms) {
        /* Past SOAK_KEPT frames a line, the median is of the first. */
        if (m->soak_count < SOAK_KEPT)
            m->soak_ms[m->soak_count++] = frame_ms;
        if ((d->frame + 1) % d->opt.soak == 0)
            demo__soak_line(d);
    }
}

void demo__bench_end(demo *d)
{
    free(d->bench.soak_ms);
    d->bench.soak_ms = NULL;
}
