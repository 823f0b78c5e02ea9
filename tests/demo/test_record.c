/*
 * --record without a GPU (demos/common/record.c): synthetic frames become
 * numbered PNGs that read back exactly and, where ffmpeg is installed (the
 * set-up script installs it), an MP4 with one video frame per frame that
 * ffprobe counts; a frame of another size ends the MP4 there; folder names
 * with quotes and spaces reach ffmpeg intact; a failing ffmpeg leaves the
 * earlier MP4 as it was; bad folders are refused.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cugl/app.h>

#include "cugl_test.h"

#include "record.h"

static char base[256];

static bool have(const char *program)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", program);
    return system(cmd) == 0;
}

/* A frame whose every pixel says which frame and where it is. */
static uint8_t *frame_pixels(int w, int h, int frame)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    assert_non_null(p);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *q = p + ((size_t)y * w + x) * 4;
            q[0] = (uint8_t)(x * 4);
            q[1] = (uint8_t)(y * 5);
            q[2] = (uint8_t)(frame * 40);
            q[3] = 255;
        }
    return p;
}

/* Frames ffprobe decodes from `mp4`; -1 when it cannot tell. */
static long probe_frames(const char *mp4)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
             "stream=nb_read_frames -of csv=p=0 \"%s\"",
             mp4);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    long n = -1;
    if (fscanf(f, "%ld", &n) != 1)
        n = -1;
    pclose(f);
    return n;
}

static void record_into(const char *dir, const int *widths, const int *heights, int frames,
                        long mp4_frames)
{
    demo_recorder r;
    assert_int_equal(demo_recorder_open(&r, "cugl-test", "test", dir), 0);
    r.log = stderr; /* stdout is the TAP stream */
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    for (int f = 0; f < frames; f++) {
        uint8_t *p = frame_pixels(widths[f], heights[f], f);
        assert_ok(demo_recorder_frame(&r, p, widths[f], heights[f], f));
        free(p);
    }
    demo_recorder_close(&r);
    for (int f = 0; f < frames; f++) {
        char file[600];
        snprintf(file, sizeof file, "%s/test-%06d.png", dir, f);
        uint8_t *got = NULL;
        int w = 0, h = 0;
        assert_ok(cugl_app_read_png(&got, &w, &h, file));
        assert_int_equal(w, widths[f]);
        assert_int_equal(h, heights[f]);
        uint8_t *want = frame_pixels(w, h, f);
        assert_memory_equal(got, want, (size_t)w * h * 4);
        free(got);
        free(want);
    }
    char mp4[600];
    snprintf(mp4, sizeof mp4, "%s/test.mp4", dir);
    if (!have("ffmpeg")) {
        printf("# no ffmpeg here: only the PNGs are checked\n");
        assert_int_not_equal(stat(mp4, &st), 0);
        return;
    }
    if (stat(mp4, &st) != 0 || st.st_size == 0)
        fail_msg("%s is missing or empty", mp4);
    if (have("ffprobe")) {
        long n = probe_frames(mp4);
        printf("# %s: %ld frames (%lld bytes)\n", mp4, n, (long long)st.st_size);
        assert_int_equal(n, mp4_frames);
    }
}

static void frames_become_pngs_and_an_mp4(void **state)
{
    (void)state;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/plain", base);
    const int w[] = {64, 64, 64, 64, 64}, h[] = {48, 48, 48, 48, 48};
    record_into(dir, w, h, 5, 5);
}

/* A quote, a space and a colon in the folder's name. */
static void awkward_folder_names(void **state)
{
    (void)state;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/it's a run:1", base);
    const int w[] = {33, 33}, h[] = {17, 17};
    record_into(dir, w, h, 2, 2);
}

/* The MP4 stops at the frame that changes size; the PNGs go on. */
static void a_size_change_ends_the_mp4(void **state)
{
    (void)state;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/resized", base);
    const int w[] = {40, 40, 40, 24, 24}, h[] = {30, 30, 30, 20, 20};
    record_into(dir, w, h, 5, 3);
}

/* An ffmpeg that fails part way: the MP4 of an earlier run stays as it
 * was, and ffmpeg's partial file goes. */
static void a_failed_mp4_keeps_the_old_one(void **state)
{
    (void)state;
    char dir[400], bin[400], fake[500], mp4[500], cmd[1200];
    snprintf(dir, sizeof dir, "%s/failing", base);
    snprintf(bin, sizeof bin, "%s/bin", base);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mkdir(bin, 0755), 0);
    snprintf(fake, sizeof fake, "%s/ffmpeg", bin);
    FILE *f = fopen(fake, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nfor a; do out=$a; done\nprintf partial > \"${out#file:}\"\n"
          "cat > /dev/null\nexit 1\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(fake, 0755), 0);
    snprintf(mp4, sizeof mp4, "%s/test.mp4", dir);
    f = fopen(mp4, "w");
    assert_non_null(f);
    fputs("the last good recording", f);
    assert_int_equal(fclose(f), 0);

    char *saved = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    char path[1400];
    snprintf(path, sizeof path, "%s:%s", bin, saved);
    setenv("PATH", path, 1);
    demo_recorder r;
    assert_int_equal(demo_recorder_open(&r, "cugl-test", "test", dir), 0);
    r.log = stderr;
    for (int i = 0; i < 3; i++) {
        uint8_t *p = frame_pixels(16, 8, i);
        assert_ok(demo_recorder_frame(&r, p, 16, 8, i));
        free(p);
    }
    demo_recorder_close(&r);
    setenv("PATH", saved, 1);
    free(saved);

    f = fopen(mp4, "r");
    assert_non_null(f);
    char got[64] = "";
    assert_non_null(fgets(got, sizeof got, f));
    fclose(f);
    assert_string_equal(got, "the last good recording");
    /* The three PNGs and the old MP4, and nothing else. */
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 4", dir);
    assert_int_equal(system(cmd), 0);
}

static void bad_folders_are_refused(void **state)
{
    (void)state;
    demo_recorder r;
    char long_dir[600];
    memset(long_dir, 'a', sizeof long_dir - 1);
    long_dir[sizeof long_dir - 1] = 0;
    assert_int_equal(demo_recorder_open(&r, "cugl-test", "test", long_dir), 2);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/missing/parent", base);
    assert_int_equal(demo_recorder_open(&r, "cugl-test", "test", dir), 1);
    /* Closing a recorder that never opened does nothing. */
    demo_recorder_close(&r);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/cugl-record-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base)) {
        printf("Bail out! cannot make a folder under %s\n", tmp && *tmp ? tmp : "/tmp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_become_pngs_and_an_mp4),
        cmocka_unit_test(awkward_folder_names),
        cmocka_unit_test(a_size_change_ends_the_mp4),
        cmocka_unit_test(a_failed_mp4_keeps_the_old_one),
        cmocka_unit_test(bad_folders_are_refused),
    };
    int rc = cugl_test_run(tests);
    if (rc == 0) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        if (system(cmd) != 0)
            printf("# could not remove %s\n", base);
    }
    return rc;
}
