/*
 * test_input.c - a context's input from events, on a headless context
 * (Mesa here): pushed events and replays reach cugl_app_context_input and
 * cugl_app_key_down at the frame they name, a resize resizes the offscreen
 * framebuffer, a close or Escape asks to close, recordings read back as the
 * events that were applied, and bad events are refused.
 */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cugl/app.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h> /* the key codes */

#include "app_test.h"

enum { W = 64, H = 48 };

static cugl_app_context *new_context(void)
{
    cugl_app_context *ctx = NULL;
    assert_ok(cugl_app_context_create(&ctx, &(cugl_app_context_desc){
                                                .mode = CUGL_APP_HEADLESS,
                                                .width = W,
                                                .height = H,
                                                .cuda_device = -1,
                                            }));
    test_gl_load();
    return ctx;
}

static cugl_app_event move(long frame, double x, double y)
{
    return (cugl_app_event){.frame = frame, .type = CUGL_APP_EVENT_MOVE, .x = x, .y = y};
}

static cugl_app_event button(long frame, int code, bool down)
{
    return (cugl_app_event){.frame = frame, .type = CUGL_APP_EVENT_BUTTON, .code = code,
                            .down = down};
}

static cugl_app_event key(long frame, int code, bool down)
{
    return (cugl_app_event){.frame = frame, .type = CUGL_APP_EVENT_KEY, .code = code,
                            .down = down};
}

/* Pushed events are seen after the next present, with motion summed. */
static void pushed_events_reach_the_next_frame(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    const cugl_app_input *in = cugl_app_context_input(ctx);
    assert_int_equal(cugl_app_context_frame(ctx), 0);
    assert_false(in->left);

    /* The first position is where the cursor enters: no motion. */
    assert_ok(cugl_app_context_push_event(ctx, &(cugl_app_event){.type = CUGL_APP_EVENT_MOVE,
                                                                 .x = 10, .y = 20}));
    assert_ok(cugl_app_context_push_event(ctx, &(cugl_app_event){.type = CUGL_APP_EVENT_BUTTON,
                                                                 .code = 0, .down = true}));
    assert_false(in->left); /* not before the present */
    assert_ok(cugl_app_context_present(ctx));
    assert_int_equal(cugl_app_context_frame(ctx), 1);
    assert_true(in->left);
    assert_true(in->x == 10 && in->y == 20 && in->dx == 0 && in->dy == 0);

    cugl_app_event steps[] = {move(0, 13, 18), move(0, 20, 25),
                              {.type = CUGL_APP_EVENT_SCROLL, .y = 1.5},
                              {.type = CUGL_APP_EVENT_SCROLL, .y = -0.5},
                              key(0, 'R', true),
                              key(0, GLFW_KEY_LEFT_SHIFT, true)};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        assert_ok(cugl_app_context_push_event(ctx, &steps[i]));
    assert_ok(cugl_app_context_present(ctx));
    assert_true(in->dx == 10 && in->dy == 5 && in->x == 20 && in->y == 25);
    assert_true(in->scroll == 1.0);
    assert_true(cugl_app_key_down(ctx, 'R'));
    assert_true(in->shift);
    assert_false(in->ctrl);
    assert_false(cugl_app_key_down(ctx, 'Q'));

    /* Motion and the wheel are per frame; what is held stays. */
    assert_ok(cugl_app_context_present(ctx));
    assert_true(in->dx == 0 && in->dy == 0 && in->scroll == 0);
    assert_true(in->left && cugl_app_key_down(ctx, 'R'));
    cugl_app_event up = key(0, 'R', false);
    assert_ok(cugl_app_context_push_event(ctx, &up));
    assert_ok(cugl_app_context_present(ctx));
    assert_false(cugl_app_key_down(ctx, 'R'));

    assert_false(cugl_app_context_should_close(ctx));
    assert_ok(cugl_app_context_push_event(ctx, &(cugl_app_event){.type = CUGL_APP_EVENT_KEY,
                                                                 .code = GLFW_KEY_ESCAPE,
                                                                 .down = true}));
    assert_ok(cugl_app_context_present(ctx));
    assert_true(cugl_app_context_should_close(ctx));
    cugl_app_context_destroy(ctx);
}

/* A replay applies each event at its frame, however the frames are drawn. */
static void replay_follows_frames(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    const cugl_app_event script[] = {
        move(0, 5, 5), button(0, 0, true),             /* frame 0 sees these */
        move(2, 9, 5), move(2, 12, 7),                 /* frame 2 */
        button(3, 0, false), key(3, GLFW_KEY_KP_ADD, true), /* frame 3 */
        {.frame = 5, .type = CUGL_APP_EVENT_CLOSE},
    };
    assert_ok(cugl_app_context_replay(ctx, script, sizeof script / sizeof script[0]));
    const cugl_app_input *in = cugl_app_context_input(ctx);
    /* frame 0 */
    assert_true(in->left && in->x == 5 && in->dx == 0);
    assert_false(cugl_app_context_replay_done(ctx));
    assert_ok(cugl_app_context_present(ctx)); /* frame 1: nothing new */
    assert_true(in->left && in->x == 5 && in->dx == 0);
    assert_ok(cugl_app_context_present(ctx)); /* frame 2 */
    assert_true(in->x == 12 && in->dx == 7 && in->dy == 2 && in->left);
    assert_ok(cugl_app_context_present(ctx)); /* frame 3 */
    assert_false(in->left);
    assert_true(in->dx == 0);
    assert_true(cugl_app_key_down(ctx, GLFW_KEY_KP_ADD));
    assert_ok(cugl_app_context_present(ctx)); /* frame 4 */
    assert_false(cugl_app_context_should_close(ctx));
    assert_false(cugl_app_context_replay_done(ctx));
    assert_ok(cugl_app_context_present(ctx)); /* frame 5 */
    assert_true(cugl_app_context_should_close(ctx));
    assert_true(cugl_app_context_replay_done(ctx));
    cugl_app_context_destroy(ctx);
}

/* A resize event makes the offscreen framebuffer that size, and GL draws there. */
static void resize_resizes_the_framebuffer(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    cugl_app_event grow = {.frame = 1, .type = CUGL_APP_EVENT_RESIZE, .width = 100, .height = 30};
    assert_ok(cugl_app_context_replay(ctx, &grow, 1));
    int w, h;
    cugl_app_context_size(ctx, &w, &h);
    assert_int_equal(w, W);
    assert_int_equal(h, H);
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_context_size(ctx, &w, &h);
    assert_int_equal(w, 100);
    assert_int_equal(h, 30);
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, w, h);
    glClearColor(0.0f, 1.0f, 0.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    uint8_t *pixels = malloc((size_t)w * h * 4);
    assert_non_null(pixels);
    assert_ok(cugl_app_read_pixels(pixels, (size_t)w * h * 4, ctx));
    /* The far corner is inside the new framebuffer. */
    const uint8_t *last = pixels + ((size_t)w * h - 1) * 4;
    assert_int_equal(last[0], 0);
    assert_int_equal(last[1], 255);
    free(pixels);
    cugl_app_context_destroy(ctx);
}

/* Of the resizes pushed for one present, the last alone is applied (each
 * rebuilds a headless framebuffer); a resize to the size there is no
 * rebuild: the picture stays. */
static void pushed_resizes_take_the_last(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glClearColor(0.0f, 0.0f, 1.0f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    cugl_app_event same = {.type = CUGL_APP_EVENT_RESIZE, .width = W, .height = H};
    assert_ok(cugl_app_context_push_event(ctx, &same));
    assert_ok(cugl_app_context_present(ctx));
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_non_null(px);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    assert_int_equal(px[2], 255); /* not lost to a rebuild */
    assert_int_equal(px[(size_t)W * H * 4 - 2], 255);
    free(px);

    const int sizes[][2] = {{300, 200}, {40, 50}, {64, 48}, {100, 30}};
    for (size_t i = 0; i < 4; i++) {
        cugl_app_event ev = {.type = CUGL_APP_EVENT_RESIZE, .width = sizes[i][0],
                             .height = sizes[i][1]};
        assert_ok(cugl_app_context_push_event(ctx, &ev));
    }
    cugl_app_event move = {.type = CUGL_APP_EVENT_MOVE, .x = 3, .y = 4};
    assert_ok(cugl_app_context_push_event(ctx, &move));
    assert_ok(cugl_app_context_present(ctx));
    int w, h;
    cugl_app_context_size(ctx, &w, &h);
    assert_int_equal(w, 100);
    assert_int_equal(h, 30);
    size_t count = 0;
    const cugl_app_event *evs = cugl_app_context_events(ctx, &count, NULL);
    size_t resizes = 0;
    for (size_t i = 0; i < count; i++)
        if (evs[i].type == CUGL_APP_EVENT_RESIZE) {
            resizes++;
            assert_int_equal(evs[i].width, 100);
            assert_int_equal(evs[i].height, 30);
        }
    assert_int_equal(resizes, 1);
    assert_int_equal(count, 2); /* the last resize and the move */
    cugl_app_context_destroy(ctx);
}

/* What a context records reads back as the events it applied, at their frames. */
static void recording_reads_back(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    const char *path = tmp_path("recorded.txt");
    assert_ok(cugl_app_context_record(ctx, path));
    cugl_app_event first = move(0, 1, 2);
    assert_ok(cugl_app_context_push_event(ctx, &first));
    assert_ok(cugl_app_context_present(ctx)); /* frame 1 sees it */
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_event later[] = {button(0, 2, true), key(0, 'W', true)};
    for (int i = 0; i < 2; i++)
        assert_ok(cugl_app_context_push_event(ctx, &later[i]));
    assert_ok(cugl_app_context_present(ctx)); /* frame 3 */
    assert_ok(cugl_app_context_record(ctx, NULL));

    cugl_app_event *events = NULL;
    size_t n = 0;
    assert_ok(cugl_app_events_read(&events, &n, path));
    assert_int_equal(n, 3);
    assert_int_equal(events[0].frame, 1);
    assert_int_equal(events[0].type, CUGL_APP_EVENT_MOVE);
    assert_true(events[0].x == 1 && events[0].y == 2);
    assert_int_equal(events[1].frame, 3);
    assert_int_equal(events[1].type, CUGL_APP_EVENT_BUTTON);
    assert_int_equal(events[1].code, 2);
    assert_int_equal(events[2].frame, 3);
    assert_int_equal(events[2].code, 'W');

    /* Replayed on a new context, the recording gives the same input. */
    cugl_app_context *again = new_context();
    assert_ok(cugl_app_context_replay(again, events, n));
    for (int f = 0; f < 3; f++)
        assert_ok(cugl_app_context_present(again));
    const cugl_app_input *in = cugl_app_context_input(again);
    assert_true(in->middle && in->x == 1 && in->y == 2);
    assert_true(cugl_app_key_down(again, 'W'));
    cugl_app_events_free(events);
    cugl_app_context_destroy(again);
    unlink(path);
    cugl_app_context_destroy(ctx);
}

/* The frame's events, in order: a press and release between two presents
 * are both there, though the state shows neither; the next present
 * empties the list; past the limit, the rest is counted as lost. */
static void events_of_the_frame(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    size_t n = 99, lost = 99;
    assert_null(cugl_app_context_events(ctx, &n, &lost));
    assert_int_equal(n, 0);
    assert_int_equal(lost, 0);
    const cugl_app_event pushed[] = {move(0, 10, 20), button(0, 0, true), button(0, 0, false),
                                     key(0, CUGL_APP_KEY_J, true), key(0, CUGL_APP_KEY_J, false),
                                     {.type = CUGL_APP_EVENT_SCROLL, .y = -2}};
    for (size_t i = 0; i < sizeof pushed / sizeof pushed[0]; i++)
        assert_ok(cugl_app_context_push_event(ctx, &pushed[i]));
    assert_ok(cugl_app_context_present(ctx));
    const cugl_app_event *got = cugl_app_context_events(ctx, &n, &lost);
    assert_int_equal(n, 6);
    assert_int_equal(lost, 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got[i].type, pushed[i].type);
        assert_int_equal(got[i].frame, 1);
        assert_int_equal(got[i].code, pushed[i].code);
        assert_int_equal(got[i].down, pushed[i].down);
    }
    assert_true(got[0].x == 10 && got[0].y == 20 && got[5].y == -2);
    /* The state saw the click and the key come and go: the key is not
     * held and its press counts; the button shows for this frame as
     * pressed (a click between two presents is not lost), and not in the next. */
    assert_true(cugl_app_context_input(ctx)->left);
    assert_false(cugl_app_key_down(ctx, CUGL_APP_KEY_J));
    assert_int_equal(cugl_app_key_presses(ctx, CUGL_APP_KEY_J), 1);
    assert_int_equal(cugl_app_key_presses(ctx, CUGL_APP_KEY_K), 0);
    assert_int_equal(cugl_app_key_presses(NULL, CUGL_APP_KEY_J), 0);
    assert_ok(cugl_app_context_present(ctx));
    assert_null(cugl_app_context_events(ctx, &n, NULL));
    assert_int_equal(n, 0);
    assert_false(cugl_app_context_input(ctx)->left);
    assert_int_equal(cugl_app_key_presses(ctx, CUGL_APP_KEY_J), 0);

    /* More than a frame keeps: the first CUGL_APP_EVENT_MAX_PER_FRAME stay. */
    cugl_app_event *many = malloc(sizeof *many * (CUGL_APP_EVENT_MAX_PER_FRAME + 10));
    assert_non_null(many);
    for (int i = 0; i < CUGL_APP_EVENT_MAX_PER_FRAME + 10; i++)
        many[i] = move(3, i % 500, 1);
    assert_ok(cugl_app_context_replay(ctx, many, CUGL_APP_EVENT_MAX_PER_FRAME + 10));
    assert_ok(cugl_app_context_present(ctx));
    got = cugl_app_context_events(ctx, &n, &lost);
    assert_int_equal(n, CUGL_APP_EVENT_MAX_PER_FRAME);
    assert_int_equal(lost, 10);
    assert_true(got[n - 1].x == (CUGL_APP_EVENT_MAX_PER_FRAME - 1) % 500);
    free(many);
    assert_null(cugl_app_context_events(NULL, &n, &lost));
    assert_int_equal(n, 0);

    /* Three presses in a frame count three; held on, the key counts once. */
    const cugl_app_event taps[] = {key(0, CUGL_APP_KEY_J, true), key(0, CUGL_APP_KEY_J, false),
                                   key(0, CUGL_APP_KEY_J, true), key(0, CUGL_APP_KEY_J, false),
                                   key(0, CUGL_APP_KEY_J, true)};
    for (size_t i = 0; i < sizeof taps / sizeof taps[0]; i++)
        assert_ok(cugl_app_context_push_event(ctx, &taps[i]));
    assert_ok(cugl_app_context_present(ctx));
    assert_int_equal(cugl_app_key_presses(ctx, CUGL_APP_KEY_J), 3);
    assert_ok(cugl_app_context_present(ctx));
    assert_true(cugl_app_key_down(ctx, CUGL_APP_KEY_J));
    assert_int_equal(cugl_app_key_presses(ctx, CUGL_APP_KEY_J), 0);
    cugl_app_context_destroy(ctx);
}

/* A recording appears only when it stops, whole: while it runs, and when
 * its writing fails (here a file-size limit, as a full disk), the file of
 * the last recording is left as it was, with no temporary file beside it. */
static void recording_replaces_the_file_whole(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    char path[320];
    snprintf(path, sizeof path, "%s", tmp_path("kept.txt"));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("0 move 5 5\n", f);
    assert_int_equal(fclose(f), 0);

    assert_ok(cugl_app_context_record(ctx, path));
    cugl_app_event ev = move(0, 7, 8);
    assert_ok(cugl_app_context_push_event(ctx, &ev));
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_event *events = NULL;
    size_t n = 0;
    assert_ok(cugl_app_events_read(&events, &n, path)); /* the old one, still */
    assert_int_equal(n, 1);
    assert_true(events[0].x == 5);
    cugl_app_events_free(events);

    struct rlimit saved, limited;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    limited = (struct rlimit){.rlim_cur = 64, .rlim_max = saved.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &limited), 0);
    for (int i = 0; i < 100; i++) {
        cugl_app_event drag = move(0, i, i);
        assert_ok(cugl_app_context_push_event(ctx, &drag));
        assert_ok(cugl_app_context_present(ctx));
    }
    cugl_status st = cugl_app_context_record(ctx, NULL);
    char error[512];
    snprintf(error, sizeof error, "%s", cugl_last_error());
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old_handler);
    /* A line that could not be written: the state of the recording, as
     * the header says, not the path's fault. */
    assert_int_equal(st, CUGL_ERROR_INVALID_STATE);
    note(error);
    assert_true(strncmp(error, "cugl_app_context_record: ", 25) == 0);
    assert_non_null(strstr(error, path));
    assert_non_null(strstr(error, "what was there is left as it was"));
    assert_ok(cugl_app_events_read(&events, &n, path));
    assert_int_equal(n, 1);
    assert_true(events[0].x == 5);
    cugl_app_events_free(events);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | grep -c kept) -eq 1", app_test_dir);
    assert_int_equal(system(cmd), 0);
    unlink(path);
    cugl_app_context_destroy(ctx);
}

/* The orbit camera follows a replayed drag and wheel, as it follows the mouse. */
static void camera_follows_events(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    const cugl_app_event drag[] = {
        move(0, 30, 20), button(0, 0, true),
        move(1, 40, 26),
        button(2, 0, false), {.frame = 2, .type = CUGL_APP_EVENT_SCROLL, .y = 2},
        key(3, 'R', true),
        key(4, 'R', false), button(4, 0, true), move(4, 50, 30),
        move(5, 60, 40), key(5, 'R', true), key(5, 'R', false),
    };
    assert_ok(cugl_app_context_replay(ctx, drag, sizeof drag / sizeof drag[0]));
    cugl_app_camera cam, home;
    cugl_app_camera_init(&cam);
    home = cam;
    cugl_app_camera_update(&cam, ctx, 0.0f); /* frame 0: pressed, no motion yet */
    assert_memory_equal(&cam, &home, sizeof cam);
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_camera_update(&cam, ctx, 0.0f); /* frame 1: dragged 10 right, 6 down */
    assert_true(cam.yaw < home.yaw);
    assert_true(cam.pitch > home.pitch);
    assert_true(cam.distance == home.distance);
    float yaw = cam.yaw;
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_camera_update(&cam, ctx, 0.0f); /* frame 2: released, wheel away */
    assert_true(cam.yaw == yaw);
    assert_true(cam.distance < home.distance);
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_camera_update(&cam, ctx, 0.0f); /* frame 3: R resets */
    assert_memory_equal(&cam, &home, sizeof cam);
    assert_ok(cugl_app_context_present(ctx));
    cugl_app_camera_update(&cam, ctx, 0.0f); /* frame 4: R up, dragged again */
    assert_true(cam.yaw != home.yaw);
    assert_ok(cugl_app_context_present(ctx));
    /* frame 5: R pressed and released within the frame, which the held
     * state never shows, still resets */
    assert_false(cugl_app_key_down(ctx, 'R'));
    cugl_app_camera_update(&cam, ctx, 0.0f);
    assert_memory_equal(&cam, &home, sizeof cam);
    cugl_app_context_destroy(ctx);
}

/* A drag that one frame holds whole (pressed, moved and released between
 * two presents: a slow frame, or a quick flick) still turns the camera, and
 * a click within one frame shows the button held for that frame alone. */
static void camera_follows_a_drag_within_one_frame(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    const cugl_app_event drag[] = {
        move(1, 30, 20), button(1, 0, true), move(1, 70, 40), button(1, 0, false),
        button(3, 0, true), button(3, 0, false),
    };
    assert_ok(cugl_app_context_replay(ctx, drag, sizeof drag / sizeof drag[0]));
    cugl_app_camera cam, home;
    cugl_app_camera_init(&cam);
    home = cam;
    assert_ok(cugl_app_context_present(ctx)); /* frame 1: the whole drag */
    assert_true(cugl_app_context_input(ctx)->left);
    cugl_app_camera_update(&cam, ctx, 0.0f);
    assert_true(cam.yaw < home.yaw);
    assert_true(cam.pitch > home.pitch);
    float yaw = cam.yaw;
    assert_ok(cugl_app_context_present(ctx)); /* frame 2: released before it */
    assert_false(cugl_app_context_input(ctx)->left);
    cugl_app_camera_update(&cam, ctx, 0.0f);
    assert_true(cam.yaw == yaw);
    assert_ok(cugl_app_context_present(ctx)); /* frame 3: pressed and released */
    assert_true(cugl_app_context_input(ctx)->left);
    cugl_app_camera_update(&cam, ctx, 0.0f); /* a click: no motion, no turn */
    assert_true(cam.yaw == yaw);
    assert_ok(cugl_app_context_present(ctx)); /* frame 4: up */
    assert_false(cugl_app_context_input(ctx)->left);
    cugl_app_context_destroy(ctx);
}

/* Without events, or without a context, the camera stays as it is. */
static void camera_without_input_stays(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    cugl_app_camera cam, before;
    cugl_app_camera_init(&cam);
    cam.pitch = 0.3f;
    before = cam;
    assert_status(cugl_app_camera_update(&cam, NULL, 0.1f), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_camera_update: ctx is NULL");
    assert_memory_equal(&cam, &before, sizeof cam);
    /* A context without input events leaves it as it is. */
    assert_ok(cugl_app_camera_update(&cam, ctx, 0.1f));
    assert_memory_equal(&cam, &before, sizeof cam);
    assert_status(cugl_app_camera_update(NULL, ctx, 0.1f), CUGL_ERROR_INVALID_ARGUMENT);
    cugl_app_context_destroy(ctx);
}

/* Time steps and drags of any size, and cameras that make no view: the
 * camera stays a view, or the call is refused and it stays as it was. */
static void camera_survives_hostile_numbers(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    const cugl_app_event held[] = {key(0, 'A', true), key(0, 'W', true), move(0, 0, 0),
                                   button(0, 0, true), button(0, 1, true),
                                   move(1, 1e6, -1e6),
                                   {.frame = 2, .type = CUGL_APP_EVENT_SCROLL, .y = -1000}};
    assert_ok(cugl_app_context_replay(ctx, held, sizeof held / sizeof held[0]));
    cugl_app_camera cam, before;
    cugl_app_camera_init(&cam);
    for (int frame = 0; frame < 4; frame++) {
        before = cam;
        const float bad_steps[] = {INFINITY, -INFINITY, NAN};
        for (size_t i = 0; i < sizeof bad_steps / sizeof bad_steps[0]; i++) {
            assert_status(cugl_app_camera_update(&cam, ctx, bad_steps[i]),
                          CUGL_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(cugl_last_error(), "cugl_app_camera_update: dt_seconds is "));
            assert_memory_equal(&cam, &before, sizeof cam);
        }
        const float steps[] = {FLT_MAX, 1e30f, 3.0f, -FLT_MAX, FLT_MIN};
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            assert_ok(cugl_app_camera_update(&cam, ctx, steps[i]));
            assert_true(isfinite(cam.yaw) && fabsf(cam.yaw) <= 3.1416f);
            assert_true(isfinite(cam.pitch) && fabsf(cam.pitch) <= 1.5534f);
            assert_true(isfinite(cam.distance) && cam.distance > 0);
            for (int c = 0; c < 3; c++)
                assert_true(isfinite(cam.target[c]));
            float view[16], proj[16];
            assert_ok(cugl_app_camera_matrices(view, proj, &cam, 1.5f));
            for (int k = 0; k < 16; k++)
                assert_true(isfinite(view[k]) && isfinite(proj[k]));
        }
        assert_ok(cugl_app_context_present(ctx));
    }

    /* Cameras that make no view are refused, by both calls. */
    static const struct {
        const char *what;
        size_t offset;
        float value;
    } broken[] = {
        {"target", offsetof(cugl_app_camera, target), NAN},
        {"distance", offsetof(cugl_app_camera, distance), 0},
        {"distance", offsetof(cugl_app_camera, distance), INFINITY},
        {"yaw", offsetof(cugl_app_camera, yaw), NAN},
        {"pitch", offsetof(cugl_app_camera, pitch), -INFINITY},
        {"fov_y", offsetof(cugl_app_camera, fov_y), 4.0f},
        {"z_near or z_far", offsetof(cugl_app_camera, z_near), 0},
        {"z_near or z_far", offsetof(cugl_app_camera, z_far), 0.001f},
    };
    for (size_t i = 0; i < sizeof broken / sizeof broken[0]; i++) {
        cugl_app_camera_init(&cam);
        memcpy((char *)&cam + broken[i].offset, &broken[i].value, sizeof(float));
        before = cam;
        char want[96];
        snprintf(want, sizeof want, "cugl_app_camera_update: the camera's %s makes no view",
                 broken[i].what);
        assert_status(cugl_app_camera_update(&cam, ctx, 0.1f), CUGL_ERROR_INVALID_ARGUMENT);
        assert_true(strncmp(cugl_last_error(), want, strlen(want)) == 0);
        assert_memory_equal(&cam, &before, sizeof cam);
        float view[16] = {0};
        assert_status(cugl_app_camera_matrices(view, NULL, &cam, 1), CUGL_ERROR_INVALID_ARGUMENT);
        assert_true(strncmp(cugl_last_error(), "cugl_app_camera_matrices: the camera's ", 39) == 0);
        assert_true(view[0] == 0);
    }
    cugl_app_camera_init(&cam);
    assert_status(cugl_app_camera_matrices(NULL, NULL, &cam, NAN), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_camera_matrices: aspect is nan: not a ratio");
    cugl_app_context_destroy(ctx);
}

static void refusals(void **state)
{
    (void)state;
    cugl_app_context *ctx = new_context();
    static const struct {
        cugl_app_event ev;
        const char *message;
    } bad[] = {
        {{.type = (cugl_app_event_type)9},
         "cugl_app_context_push_event: the type is not a cugl_app_event_type"},
        {{.type = CUGL_APP_EVENT_BUTTON, .code = 3},
         "cugl_app_context_push_event: the button is not 0, 1 or 2 (left, right, middle)"},
        {{.type = CUGL_APP_EVENT_KEY, .code = 31},
         "cugl_app_context_push_event: the key is not a GLFW key code (32 to 348)"},
        {{.type = CUGL_APP_EVENT_KEY, .code = 349},
         "cugl_app_context_push_event: the key is not a GLFW key code (32 to 348)"},
        {{.type = CUGL_APP_EVENT_MOVE, .x = 1e7},
         "cugl_app_context_push_event: a move's x and y are not from -1e6 to 1e6"},
        {{.type = CUGL_APP_EVENT_SCROLL, .y = 1e4},
         "cugl_app_context_push_event: a scroll is not from -1000 to 1000 steps"},
        {{.type = CUGL_APP_EVENT_RESIZE, .width = 0, .height = 5},
         "cugl_app_context_push_event: a resize's width and height are not from 1 to 32768"},
        {{.frame = -1, .type = CUGL_APP_EVENT_CLOSE},
         "cugl_app_context_push_event: the frame is not from 0 to 1000000000"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_status(cugl_app_context_push_event(ctx, &bad[i].ev), CUGL_ERROR_INVALID_ARGUMENT);
        assert_string_equal(cugl_last_error(), bad[i].message);
    }
    cugl_app_event ok = move(0, 1, 1);
    assert_status(cugl_app_context_push_event(NULL, &ok), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_context_push_event: ctx is NULL");
    assert_status(cugl_app_context_push_event(ctx, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_context_push_event: ev is NULL");

    /* A flood is refused once the queue is full; the present empties it. */
    for (int i = 0; i < CUGL_APP_EVENT_MAX_PENDING; i++)
        assert_ok(cugl_app_context_push_event(ctx, &ok));
    assert_status(cugl_app_context_push_event(ctx, &ok), CUGL_ERROR_INVALID_STATE);
    assert_string_equal(cugl_last_error(), "cugl_app_context_push_event: 4096 events wait for "
                                           "the next present already");
    assert_ok(cugl_app_context_present(ctx));
    assert_ok(cugl_app_context_push_event(ctx, &ok));

    cugl_app_event out_of_order[] = {move(4, 1, 1), move(3, 1, 1)};
    assert_status(cugl_app_context_replay(ctx, out_of_order, 2), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_context_replay: event 1: its frame comes "
                                           "before the previous event's");
    assert_status(cugl_app_context_replay(ctx, NULL, 2), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_context_replay: events is NULL");
    assert_ok(cugl_app_context_replay(ctx, NULL, 0));
    assert_true(cugl_app_context_replay_done(ctx));

    assert_status(cugl_app_context_record(ctx, "/nonexistent/cugl/events.txt"),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_context_record: cannot open "
                                           "/nonexistent/cugl/events.txt for writing: No such "
                                           "file or directory");
    assert_ok(cugl_app_context_record(ctx, NULL)); /* not recording: nothing to stop */
    cugl_app_context_destroy(ctx);
}

int main(void)
{
    cugl_app_context_destroy(app_test_headless(W, H));
    app_test_dir_make("cugl-input");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pushed_events_reach_the_next_frame),
        cmocka_unit_test(replay_follows_frames),
        cmocka_unit_test(resize_resizes_the_framebuffer),
        cmocka_unit_test(pushed_resizes_take_the_last),
        cmocka_unit_test(recording_reads_back),
        cmocka_unit_test(events_of_the_frame),
        cmocka_unit_test(recording_replaces_the_file_whole),
        cmocka_unit_test(camera_follows_events),
        cmocka_unit_test(camera_follows_a_drag_within_one_frame),
        cmocka_unit_test(camera_without_input_stays),
        cmocka_unit_test(camera_survives_hostile_numbers),
        cmocka_unit_test(refusals),
    };
    int failed = cugl_test_run(tests);
    app_test_dir_remove();
    return failed;
}
