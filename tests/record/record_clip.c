/*
 * record_clip.c - a short recording of a picture anyone can predict, for
 * the browser suite to play (tests/browser/record_play_test.mjs):
 *
 *   record_clip OUT.mp4|OUT.webm
 *
 * records FRAMES frames at FPS of W x H, drawn on a headless context, with
 * the recorder (cugl/app_record.h) keeping every frame. Frame i's top half
 * is BANDS fixed vertical bands of `bands`' colours; its bottom half is
 * one colour, `steps`[(i / STEP) % STEPS]: a player's picture says which
 * tenth of the clip it shows. Prints the clip's description as one line of
 * JSON (size, frames, rate, the colours) so that the page's checks derive
 * from these tables alone. Where there is no headless GL or this build
 * has no encoder for the container, prints why and exits 77; any other
 * failure: the message on stderr, exit 1.
 */
#include <stdio.h>
#include <string.h>

#include "test_gl.h"

#include <cugl/app_record.h>

enum { W = 160, H = 120, FRAMES = 60, FPS = 30, STEP = 6, BANDS = 4, STEPS = 10 };

/* sRGB levels, far enough apart that a codec's error cannot turn one into
 * another, and not fully saturated, so that rounding in a player's YUV to
 * RGB stays within range. */
static const unsigned char bands[BANDS][3] = {
    {200, 60, 60}, {60, 180, 80}, {60, 90, 200}, {230, 230, 230},
};
static const unsigned char steps[STEPS][3] = {
    {240, 200, 40}, {40, 200, 220}, {200, 60, 200}, {128, 128, 128}, {30, 30, 30},
    {250, 120, 30}, {90, 40, 160},  {160, 230, 120}, {20, 110, 60},  {220, 150, 170},
};

static void fill(int x, int y, int w, int h, const unsigned char rgb[3])
{
    glScissor(x, y, w, h);
    glClearColor(rgb[0] / 255.0f, rgb[1] / 255.0f, rgb[2] / 255.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
}

/* Frame i, in GL's rows (bottom first): the steps' colour below, the bands above. */
static void draw(cugl_app_context *ctx, int i)
{
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glEnable(GL_SCISSOR_TEST);
    fill(0, 0, W, H / 2, steps[(i / STEP) % STEPS]);
    for (int b = 0; b < BANDS; b++)
        fill(b * W / BANDS, H / 2, W / BANDS, H - H / 2, bands[b]);
    glDisable(GL_SCISSOR_TEST);
}

static void print_colours(const char *name, const unsigned char (*rgb)[3], int n)
{
    printf("\"%s\":[", name);
    for (int k = 0; k < n; k++)
        printf("%s[%d,%d,%d]", k ? "," : "", rgb[k][0], rgb[k][1], rgb[k][2]);
    printf("]");
}

static int failed(const char *what)
{
    fprintf(stderr, "record_clip: %s: %s\n", what, cugl_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: record_clip OUT.mp4|OUT.webm\n");
        return 2;
    }
    const char *path = argv[1];
    cugl_app_context *ctx = NULL;
    cugl_status st = cugl_app_context_create(
        &ctx, &(cugl_app_context_desc){
                  .mode = CUGL_APP_HEADLESS, .width = W, .height = H, .cuda_device = -1});
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        printf("no headless GL: %s\n", cugl_last_error());
        return 77;
    }
    if (st != CUGL_OK)
        return failed("a headless context");
    test_gl_load();

    cugl_app_recorder *rec = NULL;
    st = cugl_app_recorder_create(
        &rec, ctx, path, &(cugl_app_recorder_desc){.fps = FPS, .kbps = 1000,
                                                   .keep_every_frame = true});
    if (st == CUGL_ERROR_NOT_SUPPORTED) {
        printf("%s\n", cugl_last_error());
        cugl_app_context_destroy(ctx);
        return 77;
    }
    if (st != CUGL_OK) {
        cugl_app_context_destroy(ctx);
        return failed(path);
    }
    for (int i = 0; i < FRAMES && st == CUGL_OK; i++) {
        draw(ctx, i);
        st = cugl_app_recorder_frame(rec);
        if (st == CUGL_OK)
            st = cugl_app_context_present(ctx);
    }
    cugl_app_record_counts counts = {0};
    if (st == CUGL_OK)
        st = cugl_app_recorder_counts(rec, &counts);
    if (st != CUGL_OK) {
        int rc = failed("a frame");
        cugl_app_recorder_close(rec);
        cugl_app_context_destroy(ctx);
        return rc;
    }
    st = cugl_app_recorder_close(rec);
    cugl_app_context_destroy(ctx);
    if (st != CUGL_OK)
        return failed(path);
    if (counts.kept != FRAMES || counts.dropped != 0) {
        fprintf(stderr, "record_clip: %ld frames kept and %ld dropped of %d\n", counts.kept,
                counts.dropped, FRAMES);
        return 1;
    }
    printf("{\"width\":%d,\"height\":%d,\"frames\":%d,\"fps\":%d,\"step\":%d,", W, H, FRAMES, FPS,
           STEP);
    print_colours("bands", bands, BANDS);
    printf(",");
    print_colours("steps", steps, STEPS);
    printf("}\n");
    return 0;
}
