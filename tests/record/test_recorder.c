/*
 * test_recorder.c - cugl/app_record.h on a headless context (Mesa here,
 * NVIDIA's EGL device on the GPU machine): a known animation recorded to
 * MP4 (H.264) and WebM (VP8, and VP9 where asked), read back by the tests'
 * own reader (frames, size, codec, each frame's time) and decoded by it,
 * each frame compared with the picture drawn (PSNR); the same run twice
 * gives the same bytes;
 * a scaled recording; the wall clock; bad input refused with nothing left
 * behind; a full disk under a recording. FFPROBE and FFMPEG name Debian's
 * ffprobe and ffmpeg: where they are, they read every file again, and
 * must agree with the reader.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app_test.h"
#include "readback.h"

#include <cugl/app_record.h>

#include "glad/gl.h"

enum { W = 320, H = 240, FRAMES = 90 };

static cugl_app_context *ctx;

/* Frame i's picture: a background whose colour turns with i, and a block
 * that moves 3 pixels a frame (GL's rows, bottom first, as drawn). */
static void block_of(long i, int *x, int *y, int *w, int *h)
{
    *w = 64;
    *h = 48;
    *x = (int)((i * 3) % (W - 64));
    *y = (int)((i * 2) % (H - 48));
}

static void background_of(long i, float rgb[3])
{
    rgb[0] = 0.5f + 0.4f * sinf((float)i * 0.07f);
    rgb[1] = 0.3f;
    rgb[2] = 0.5f + 0.4f * cosf((float)i * 0.05f);
}

static void draw(long i)
{
    float bg[3];
    background_of(i, bg);
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glDisable(GL_SCISSOR_TEST);
    glClearColor(bg[0], bg[1], bg[2], 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    int x, y, w, h;
    block_of(i, &x, &y, &w, &h);
    glEnable(GL_SCISSOR_TEST);
    glScissor(x, y, w, h);
    glClearColor(0.95f, 0.9f, 0.1f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_SCISSOR_TEST);
}

/* The picture as RGB rows top first, at `scale` (1 or 2) times smaller. */
static void expected(long i, uint8_t *rgb, int scale)
{
    float bg[3];
    background_of(i, bg);
    int x, y, w, h;
    block_of(i, &x, &y, &w, &h);
    int ow = W / scale, oh = H / scale;
    for (int r = 0; r < oh; r++) {
        for (int c = 0; c < ow; c++) {
            /* the pixel's centre in the full picture, GL's row */
            double px = (c + 0.5) * scale, py = H - (r + 0.5) * scale;
            bool in = px >= x && px < x + w && py >= y && py < y + h;
            uint8_t *p = rgb + ((size_t)r * ow + c) * 3;
            for (int k = 0; k < 3; k++) {
                float v = in ? (k == 0 ? 0.95f : k == 1 ? 0.9f : 0.1f) : bg[k];
                p[k] = (uint8_t)lroundf(v * 255.0f);
            }
        }
    }
}

/* Record `frames` frames of the animation into `path`. */
static void record(const char *path, const cugl_app_recorder_desc *desc, long frames)
{
    cugl_app_recorder *rec = NULL;
    assert_ok(cugl_app_recorder_create(&rec, ctx, path, desc));
    for (long i = 0; i < frames; i++) {
        draw(i);
        assert_ok(cugl_app_recorder_frame(rec));
        assert_ok(cugl_app_context_present(ctx));
    }
    cugl_app_record_counts c;
    assert_ok(cugl_app_recorder_counts(rec, &c));
    assert_int_equal(c.kept + c.dropped, frames);
    if (desc && desc->keep_every_frame)
        assert_int_equal(c.dropped, 0);
    assert_ok(cugl_app_recorder_close(rec));
}

static const char *tool(const char *name)
{
    const char *t = getenv(name);
    return t && *t ? t : NULL;
}

/* Checks that could not run for want of the codec in this build: the
 * test fails at its end under CUGL_TEST_NO_SKIP (after every case ran and
 * cleaned up), else says so. */
static int not_run;

/* ffprobe's words for the video stream of `path` (one line). */
static void probe(const char *path, const char *entries, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -count_frames -select_streams v:0 -show_entries %s "
             "-of default=noprint_wrappers=1 '%s'",
             tool("FFPROBE"), entries, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    assert_int_equal(pclose(p), 0);
}

/* The reader's view of `path` (decoded where `decode`), and ffprobe's,
 * where it is, agreeing with it. */
static void read_back(reader_video *v, const char *path, bool decode)
{
    readback_read(v, path, decode);
    if (!readback_tools())
        return;
    reader_video p;
    readback_probe(&p, path, false);
    readback_agree(v, &p);
    reader_free(&p);
}

/* A picture's PSNR against the one drawn (RGB, 8 bits). */
static double rgb_psnr(const uint8_t *got, const uint8_t *want, size_t bytes)
{
    double se = 0;
    for (size_t k = 0; k < bytes; k++) {
        double d = (double)got[k] - want[k];
        se += d * d;
    }
    double mse = se / (double)bytes;
    return mse > 0 ? 10.0 * log10(255.0 * 255.0 / mse) : 99.0;
}

/* Every frame ffmpeg decodes (RGB) against the picture drawn: the worst PSNR. */
static double ffmpeg_worst_psnr(const char *path, int frames, int scale)
{
    int ow = W / scale, oh = H / scale;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' -v error -i '%s' -f rawvideo -pix_fmt rgb24 -", tool("FFMPEG"),
             path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t bytes = (size_t)ow * oh * 3;
    uint8_t *got = malloc(bytes), *want = malloc(bytes);
    assert_non_null(got);
    assert_non_null(want);
    double worst = INFINITY;
    int n = 0;
    while (fread(got, 1, bytes, p) == bytes) {
        expected(n, want, scale);
        worst = fmin(worst, rgb_psnr(got, want, bytes));
        n++;
    }
    assert_int_equal(pclose(p), 0);
    free(got);
    free(want);
    assert_int_equal(n, frames);
    return worst;
}

static uint8_t clamp_byte(double v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lround(v)); }

/* Every frame the reader decoded against the picture drawn: the worst
 * PSNR. Its I420 turned into RGB as the recorder made it, BT.601 in the
 * limited range, each chroma sample for its 2 x 2 pixels. */
static double reader_worst_psnr(const reader_video *v, int scale)
{
    int ow = W / scale, oh = H / scale, cw = (ow + 1) / 2;
    assert_int_equal(v->width, ow);
    assert_int_equal(v->height, oh);
    size_t bytes = (size_t)ow * oh * 3;
    uint8_t *got = malloc(bytes), *want = malloc(bytes);
    assert_non_null(got);
    assert_non_null(want);
    double worst = INFINITY;
    for (int n = 0; n < v->frames; n++) {
        const uint8_t *y = v->pictures + (size_t)n * v->picture_size, *u = y + ow * oh;
        const uint8_t *vv = u + (size_t)cw * ((oh + 1) / 2);
        for (int r = 0; r < oh; r++)
            for (int c = 0; c < ow; c++) {
                double l = 1.164 * (y[r * ow + c] - 16);
                double cb = u[r / 2 * cw + c / 2] - 128, cr = vv[r / 2 * cw + c / 2] - 128;
                uint8_t *p = got + ((size_t)r * ow + c) * 3;
                p[0] = clamp_byte(l + 1.596 * cr);
                p[1] = clamp_byte(l - 0.392 * cb - 0.813 * cr);
                p[2] = clamp_byte(l + 2.017 * cb);
            }
        expected(n, want, scale);
        worst = fmin(worst, rgb_psnr(got, want, bytes));
    }
    free(got);
    free(want);
    return worst;
}

/* Whether this build records `name`'s container (its codec built in);
 * says so where not, which CUGL_TEST_NO_SKIP makes a failure at the end. */
static bool built_codec(const char *name, cugl_app_record_codec codec)
{
    cugl_app_recorder *rec = NULL;
    cugl_status st =
        cugl_app_recorder_create(&rec, ctx, tmp_path(name), &(cugl_app_recorder_desc){.codec = codec});
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        print_message("# not run here: %s\n", cugl_last_error());
        not_run++;
        return false;
    }
    assert_ok(st);
    assert_status(cugl_app_recorder_close(rec), CUGL_ERROR_INVALID_STATE); /* no frame */
    return true;
}

/* Whether this build records the container of `name` in its own codec. */
static bool built(const char *name)
{
    return built_codec(name, CUGL_APP_RECORD_CODEC_DEFAULT);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The folder holds nothing but `keep` (NULL: nothing): no temporary file. */
static void folder_holds(const char *keep)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = '%s'", app_test_dir, keep ? keep : "");
    assert_int_equal(system(cmd), 0);
}

/* The animation in each container: its frames, size, codec and times, and
 * the pictures decoded within a PSNR bound of what was drawn; by the
 * reader, and by ffprobe and ffmpeg where they are. */
static void plays_back(const char *name, const char *codec, cugl_app_record_codec asked)
{
    if (!built_codec(name, asked))
        return;
    const char *path = tmp_path(name);
    record(path,
           &(cugl_app_recorder_desc){.keep_every_frame = true, .kbps = 4000, .codec = asked},
           FRAMES);
    folder_holds(name);
    reader_video v;
    read_back(&v, path, true);
    assert_string_equal(v.codec, codec);
    assert_int_equal(v.width, W);
    assert_int_equal(v.height, H);
    assert_int_equal(v.frames, FRAMES);
    for (int i = 0; i < FRAMES; i++)
        assert_true(fabs(v.pts[i] - i / 60.0) <= 0.0011); /* WebM's milliseconds */
    double psnr = reader_worst_psnr(&v, 1);
    print_message("# %s: the worst frame %.2f dB against the picture drawn\n", name, psnr);
    assert_true(psnr >= 30.0);
    reader_free(&v);
    if (tool("FFPROBE") && tool("FFMPEG")) {
        char info[512];
        probe(path, "stream=codec_name,width,height,nb_read_frames", info, sizeof info);
        note(info);
        char want[256];
        snprintf(want, sizeof want, "codec_name=%s\nwidth=%d\nheight=%d\n", codec, W, H);
        assert_non_null(strstr(info, want));
        char frames[64];
        snprintf(frames, sizeof frames, "nb_read_frames=%d", FRAMES);
        assert_non_null(strstr(info, frames));
        psnr = ffmpeg_worst_psnr(path, FRAMES, 1);
        print_message("# %s: by ffmpeg, the worst frame %.2f dB\n", name, psnr);
        assert_true(psnr >= 30.0);
    }
    unlink(path);
}

static void mp4_plays_back(void **state)
{
    (void)state;
    plays_back("run.mp4", "h264", CUGL_APP_RECORD_CODEC_DEFAULT);
}

static void webm_plays_back(void **state)
{
    (void)state;
    plays_back("run.webm", "vp8", CUGL_APP_RECORD_CODEC_DEFAULT);
}

static void vp9_plays_back(void **state)
{
    (void)state;
    plays_back("run9.webm", "vp9", CUGL_APP_RECORD_CODEC_VP9);
}

/* The fixed clock and same_bytes: the same frames give the same bytes, in
 * each codec. */
static void same_run_same_bytes(void **state)
{
    (void)state;
    const char *names[][2] = {{"a.mp4", "b.mp4"}, {"a.webm", "b.webm"}, {"a9.webm", "b9.webm"}};
    const cugl_app_record_codec codecs[] = {CUGL_APP_RECORD_CODEC_H264, CUGL_APP_RECORD_CODEC_VP8,
                                            CUGL_APP_RECORD_CODEC_VP9};
    for (int k = 0; k < 3; k++) {
        if (!built_codec(names[k][0], codecs[k]))
            continue;
        char a[320], b[320], cmd[800];
        snprintf(a, sizeof a, "%s", tmp_path(names[k][0]));
        snprintf(b, sizeof b, "%s", tmp_path(names[k][1]));
        cugl_app_recorder_desc d = {.keep_every_frame = true, .codec = codecs[k],
                                    .same_bytes = true};
        record(a, &d, 30);
        record(b, &d, 30);
        snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
        int same = system(cmd);
        unlink(a);
        unlink(b);
        if (same != 0)
            fail_msg("two recordings of the same frames differ (%s)", names[k][0]);
    }
}

/* A recording of half the size: scaled on the GPU, filtered. */
static void scaled(void **state)
{
    (void)state;
    if (!built("half.mp4"))
        return;
    const char *path = tmp_path("half.mp4");
    record(path,
           &(cugl_app_recorder_desc){.width = W / 2, .height = H / 2, .keep_every_frame = true,
                                     .kbps = 2000},
           20);
    /* A filtered half: the block's edges blur, the rest holds. */
    reader_video v;
    read_back(&v, path, true);
    assert_int_equal(v.frames, 20);
    double psnr = reader_worst_psnr(&v, 2);
    print_message("# half size: the worst frame %.2f dB\n", psnr);
    assert_true(psnr >= 24.0);
    reader_free(&v);
    if (tool("FFPROBE") && tool("FFMPEG")) {
        char info[256];
        probe(path, "stream=width,height", info, sizeof info);
        assert_non_null(strstr(info, "width=160\nheight=120"));
        psnr = ffmpeg_worst_psnr(path, 20, 2);
        print_message("# half size: by ffmpeg, the worst frame %.2f dB\n", psnr);
        assert_true(psnr >= 24.0);
    }
    unlink(path);
}

/* The wall clock: frames 40 ms apart are stamped 40 ms apart. */
static void wall_clock(void **state)
{
    (void)state;
    if (!built("wall.webm"))
        return;
    const char *path = tmp_path("wall.webm");
    cugl_app_recorder *rec = NULL;
    assert_ok(cugl_app_recorder_create(
        &rec, ctx, path,
        &(cugl_app_recorder_desc){.clock = CUGL_APP_RECORD_CLOCK_WALL, .keep_every_frame = true}));
    for (long i = 0; i < 6; i++) {
        draw(i);
        assert_ok(cugl_app_recorder_frame(rec));
        assert_ok(cugl_app_context_present(ctx));
        nanosleep(&(struct timespec){.tv_nsec = 40000000}, NULL);
    }
    assert_ok(cugl_app_recorder_close(rec));
    reader_video v;
    read_back(&v, path, false);
    assert_int_equal(v.frames, 6);
    for (int i = 1; i < 6; i++) {
        double step = v.pts[i] - v.pts[i - 1];
        assert_true(step >= 0.038 && step < 0.2);
    }
    reader_free(&v);
    unlink(path);
}

/* Bad input: refused with a message naming what is wrong, nothing made. */
static void refusals(void **state)
{
    (void)state;
    cugl_app_recorder *rec = (cugl_app_recorder *)&rec;
    static const struct {
        const char *name;
        cugl_app_recorder_desc desc;
        const char *words;
    } bad[] = {
        {"run.avi", {.fps = 0}, "ends in neither .mp4 (H.264) nor .webm (VP8, VP9)"},
        {"run", {.fps = 0}, "ends in neither"},
        {"run.mp4", {.fps = -1}, "fps is -1: not from 1 to 60"},
        {"run.mp4", {.fps = NAN}, "fps is nan"},
        {"run.mp4", {.fps = 61}, "fps is 61"},
        {"run.mp4", {.fps = 0.5}, "fps is 0.5"},
        {"run.webm", {.kbps = -5}, "kbps is -5"},
        {"run.webm", {.width = 320}, "the size is 320 x 0"},
        {"run.webm", {.width = 8, .height = 8}, "the size is 8 x 8"},
        {"run.webm", {.width = 9000, .height = 100}, "the size is 9000 x 100"},
        {"run.mp4", {.clock = (cugl_app_record_clock)7}, "clock is 7"},
        {"run.webm", {.codec = (cugl_app_record_codec)9}, "codec is 9"},
        {"run.webm", {.codec = (cugl_app_record_codec)-1}, "codec is -1"},
        {"run.mp4", {.codec = CUGL_APP_RECORD_CODEC_VP9}, "VP9 is not in .mp4"},
        {"run.mp4", {.codec = CUGL_APP_RECORD_CODEC_VP8}, "VP8 is not in .mp4"},
        {"run.webm", {.codec = CUGL_APP_RECORD_CODEC_H264}, "H.264 is not in .webm"},
        {"no/such/folder/run.mp4", {.fps = 0}, "cannot open"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_status(cugl_app_recorder_create(&rec, ctx, tmp_path(bad[i].name), &bad[i].desc),
                      CUGL_ERROR_INVALID_ARGUMENT);
        assert_null(rec);
        if (!strstr(cugl_last_error(), bad[i].words))
            fail_msg("%s: '%s' lacks '%s'", bad[i].name, cugl_last_error(), bad[i].words);
        rec = (cugl_app_recorder *)&rec;
    }
    /* A folder where the file would go. */
    const char *dir = tmp_path("dir.mp4");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_status(cugl_app_recorder_create(&rec, ctx, dir, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "it is a directory"));
    rmdir(dir);
    assert_status(cugl_app_recorder_create(NULL, ctx, "a.mp4", NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_recorder_create(&rec, NULL, "a.mp4", NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_recorder_create(&rec, ctx, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_recorder_create(&rec, ctx, "", NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_recorder_frame(NULL), CUGL_ERROR_INVALID_ARGUMENT);
    cugl_app_record_counts c;
    assert_status(cugl_app_recorder_counts(NULL, &c), CUGL_ERROR_INVALID_ARGUMENT);
    assert_ok(cugl_app_recorder_close(NULL));
    folder_holds(NULL);

    /* Closed without a frame: an error, nothing written, and a file that
     * was there stays as it was. */
    if (!built("kept.mp4"))
        return;
    const char *kept = tmp_path("kept.mp4");
    assert_ok(cugl_app_write_file(kept, "old", 3));
    assert_ok(cugl_app_recorder_create(&rec, ctx, kept, NULL));
    assert_ok(cugl_app_recorder_counts(rec, &c));
    assert_int_equal(c.kept, 0);
    assert_status(cugl_app_recorder_close(rec), CUGL_ERROR_INVALID_STATE);
    assert_non_null(strstr(cugl_last_error(), "no frame was kept"));
    folder_holds("kept.mp4");
    struct stat st;
    assert_int_equal(stat(kept, &st), 0);
    assert_int_equal(st.st_size, 3);
    /* and a recording replaces it once whole */
    record(kept, NULL, 3);
    assert_int_equal(stat(kept, &st), 0);
    assert_true(st.st_size > 100);
    folder_holds("kept.mp4");
    unlink(kept);
}

/* A full disk under a recording (a link to /dev/full, written in place):
 * the failure is reported with the file and the reason, by the frame that
 * met it or by close, and the recorder frees everything. */
static void full_disk(void **state)
{
    (void)state;
    if (!built("full.mp4"))
        return;
    const char *link = tmp_path("full.mp4");
    if (symlink("/dev/full", link) != 0 || access("/dev/full", W_OK) != 0) {
        print_message("# not run here: no writable /dev/full\n");
        unlink(link);
        return;
    }
    cugl_app_recorder *rec = NULL;
    assert_ok(cugl_app_recorder_create(&rec, ctx, link, &(cugl_app_recorder_desc){.kbps = 8000}));
    cugl_status st = CUGL_OK;
    for (long i = 0; i < 200 && st == CUGL_OK; i++) {
        draw(i);
        st = cugl_app_recorder_frame(rec);
        assert_ok(cugl_app_context_present(ctx));
    }
    cugl_status closed = cugl_app_recorder_close(rec);
    assert_status(closed, CUGL_ERROR_INVALID_ARGUMENT);
    note(cugl_last_error());
    assert_non_null(strstr(cugl_last_error(), "No space left on device"));
    assert_non_null(strstr(cugl_last_error(), "full.mp4"));
    assert_true(exists(link)); /* still the link */
    unlink(link);
}

int main(void)
{
    ctx = app_test_headless(W, H);
    app_test_dir_make("cugl-record");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mp4_plays_back),   cmocka_unit_test(webm_plays_back),
        cmocka_unit_test(vp9_plays_back),
        cmocka_unit_test(same_run_same_bytes), cmocka_unit_test(scaled),
        cmocka_unit_test(wall_clock),       cmocka_unit_test(refusals),
        cmocka_unit_test(full_disk),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    int failed = _cmocka_run_group_tests("tests", tests, sizeof tests / sizeof tests[0], NULL,
                                         NULL);
    cugl_app_context_destroy(ctx);
    app_test_dir_remove();
    const char *no_skip = getenv("CUGL_TEST_NO_SKIP");
    if (not_run > 0 && no_skip && *no_skip && strcmp(no_skip, "0") != 0) {
        printf("# %d checks did not run: a codec not built (CUGL_TEST_NO_SKIP)\n", not_run);
        return failed ? failed : 1;
    }
    return failed;
}
