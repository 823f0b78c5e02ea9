/*
 * test_events.c - input events as text (cugl/app.h): every kind parsed to
 * the values it names, formatted back to the same event, bad lines refused
 * with a message that quotes them and says why, and files read whole or
 * not at all. No GL: these are plain values.
 */
#include <math.h>
#include <unistd.h>

#include <cugl/app.h>

#include "cugl_test.h"

typedef struct good_line {
    const char *line;
    cugl_app_event ev;
} good_line;

static const good_line good[] = {
    {"0 move 12.5 -3", {.frame = 0, .type = CUGL_APP_EVENT_MOVE, .x = 12.5, .y = -3}},
    {"  7\tmove 1e3 2  ", {.frame = 7, .type = CUGL_APP_EVENT_MOVE, .x = 1000, .y = 2}},
    {"1 button left down", {.frame = 1, .type = CUGL_APP_EVENT_BUTTON, .code = 0, .down = true}},
    {"2 button right up", {.frame = 2, .type = CUGL_APP_EVENT_BUTTON, .code = 1}},
    {"3 button middle down", {.frame = 3, .type = CUGL_APP_EVENT_BUTTON, .code = 2, .down = true}},
    {"4 scroll -2.5", {.frame = 4, .type = CUGL_APP_EVENT_SCROLL, .y = -2.5}},
    {"5 key r down", {.frame = 5, .type = CUGL_APP_EVENT_KEY, .code = 'R', .down = true}},
    {"5 key R up", {.frame = 5, .type = CUGL_APP_EVENT_KEY, .code = 'R'}},
    {"6 key 4 down", {.frame = 6, .type = CUGL_APP_EVENT_KEY, .code = '4', .down = true}},
    {"6 key = down", {.frame = 6, .type = CUGL_APP_EVENT_KEY, .code = '=', .down = true}},
    {"6 key \\ down", {.frame = 6, .type = CUGL_APP_EVENT_KEY, .code = '\\', .down = true}},
    {"7 key escape down", {.frame = 7, .type = CUGL_APP_EVENT_KEY, .code = 256, .down = true}},
    {"7 key kp_add down", {.frame = 7, .type = CUGL_APP_EVENT_KEY, .code = 334, .down = true}},
    {"7 key kp_subtract up", {.frame = 7, .type = CUGL_APP_EVENT_KEY, .code = 333}},
    {"7 key left down", {.frame = 7, .type = CUGL_APP_EVENT_KEY, .code = 263, .down = true}},
    {"7 key f12 down", {.frame = 7, .type = CUGL_APP_EVENT_KEY, .code = 301, .down = true}},
    {"7 key 341 down", {.frame = 7, .type = CUGL_APP_EVENT_KEY, .code = 341, .down = true}},
    {"8 resize 800 600", {.frame = 8, .type = CUGL_APP_EVENT_RESIZE, .width = 800, .height = 600}},
    {"1000000000 close", {.frame = 1000000000, .type = CUGL_APP_EVENT_CLOSE}},
};

static void same_event(const cugl_app_event *got, const cugl_app_event *want, const char *line)
{
    if (got->frame != want->frame || got->type != want->type || got->x != want->x ||
        got->y != want->y || got->code != want->code || got->down != want->down ||
        got->width != want->width || got->height != want->height)
        fail_msg("'%s': got frame %ld type %d x %g y %g code %d down %d size %dx%d", line,
                 got->frame, (int)got->type, got->x, got->y, got->code, (int)got->down,
                 got->width, got->height);
}

static void parses_every_kind(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cugl_app_event ev;
        assert_ok(cugl_app_event_parse(&ev, good[i].line));
        same_event(&ev, &good[i].ev, good[i].line);
    }
}

/* format then parse gives the event back, and the text once more. */
static void formats_back(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[CUGL_APP_EVENT_MAX_LINE + 1], again[CUGL_APP_EVENT_MAX_LINE + 1];
        int n = cugl_app_event_format(text, sizeof text, &good[i].ev);
        assert_true(n > 0 && (size_t)n < sizeof text);
        cugl_app_event ev;
        assert_ok(cugl_app_event_parse(&ev, text));
        same_event(&ev, &good[i].ev, text);
        assert_int_equal(cugl_app_event_format(again, sizeof again, &ev), n);
        assert_string_equal(again, text);
    }
    /* Numbers that need every digit survive. */
    cugl_app_event ev = {.frame = 3, .type = CUGL_APP_EVENT_MOVE, .x = 0.1, .y = 1.0 / 3.0};
    char text[CUGL_APP_EVENT_MAX_LINE + 1];
    cugl_app_event_format(text, sizeof text, &ev);
    cugl_app_event back;
    assert_ok(cugl_app_event_parse(&back, text));
    same_event(&back, &ev, text);
    /* The length needed, as snprintf says it. */
    assert_int_equal(cugl_app_event_format(NULL, 0, &(cugl_app_event){.type = CUGL_APP_EVENT_CLOSE}),
                     (int)strlen("0 close"));
    assert_int_equal(cugl_app_event_format(text, sizeof text,
                                           &(cugl_app_event){.type = CUGL_APP_EVENT_BUTTON,
                                                             .code = 3}),
                     -1);
    assert_int_equal(cugl_app_event_format(text, sizeof text,
                                           &(cugl_app_event){.type = (cugl_app_event_type)42}),
                     -1);
    assert_int_equal(cugl_app_event_format(text, sizeof text, NULL), -1);
}

#define BAD_LINES(X)                                                                          \
    X(empty, "", "expected '<frame> <event> ...'")                                           \
    X(frame_only, "12", "expected '<frame> <event> ...'")                                    \
    X(negative_frame, "-1 close", "the frame is not a number from 0 to 1000000000")         \
    X(huge_frame, "1000000001 close", "the frame is not a number from 0 to 1000000000")      \
    X(word_frame, "one close", "the frame is not a number from 0 to 1000000000")             \
    X(unknown_event, "1 jump", "the event is not move, button, scroll, key, resize or close") \
    X(move_short, "1 move 3", "too few words")                                              \
    X(move_long, "1 move 3 4 5", "too many words")                                          \
    X(move_nan, "1 move nan 4", "move takes x and y, numbers from -1e6 to 1e6")             \
    X(move_far, "1 move 3 2e6", "move takes x and y, numbers from -1e6 to 1e6")             \
    X(move_junk, "1 move 3x 4", "move takes x and y, numbers from -1e6 to 1e6")             \
    X(button_name, "1 button fourth down", "the button is not left, right or middle")        \
    X(button_state, "1 button left pressed", "a button goes down or up")                    \
    X(scroll_far, "1 scroll 1e9", "scroll takes a number of steps from -1000 to 1000")       \
    X(scroll_inf, "1 scroll inf", "scroll takes a number of steps from -1000 to 1000")       \
    X(key_unknown, "1 key hyper down",                                                      \
      "unknown key (a letter, digit, ,-./;=[\\]`', a name such as escape or kp_add, or a "   \
      "GLFW key code)")                                                                     \
    X(key_code_low, "1 key 31 down",                                                        \
      "unknown key (a letter, digit, ,-./;=[\\]`', a name such as escape or kp_add, or a "   \
      "GLFW key code)")                                                                     \
    X(key_code_high, "1 key 349 down",                                                      \
      "unknown key (a letter, digit, ,-./;=[\\]`', a name such as escape or kp_add, or a "   \
      "GLFW key code)")                                                                     \
    X(key_state, "1 key R pressed", "a key goes down or up")                                \
    X(resize_zero, "1 resize 0 600", "resize takes a width and a height from 1 to 32768")   \
    X(resize_huge, "1 resize 800 40000", "resize takes a width and a height from 1 to 32768") \
    X(close_extra, "1 close now", "too many words")

static void refuses_bad_lines(void **state)
{
    (void)state;
    static const struct {
        const char *line, *why;
    } bad[] = {
#define BAD_ROW(id, line, why) {line, why},
        BAD_LINES(BAD_ROW)
#undef BAD_ROW
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cugl_app_event ev;
        assert_status(cugl_app_event_parse(&ev, bad[i].line), CUGL_ERROR_INVALID_ARGUMENT);
        char want[512];
        snprintf(want, sizeof want, "cugl_app_event_parse: '%s': %s", bad[i].line, bad[i].why);
        assert_string_equal(cugl_last_error(), want);
    }
    cugl_app_event ev;
    assert_status(cugl_app_event_parse(NULL, "1 close"), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_event_parse: out is NULL");
    assert_status(cugl_app_event_parse(&ev, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_event_parse: line is NULL");
    char longer[CUGL_APP_EVENT_MAX_LINE + 2];
    memset(longer, ' ', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_status(cugl_app_event_parse(&ev, longer), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_event_parse: the line is longer than 256 bytes");

    /* The limit excludes the line's end, as reading a file does: 256 bytes
     * of event and "\n" or "\r\n" parse. */
    char full[CUGL_APP_EVENT_MAX_LINE + 3];
    memset(full, ' ', sizeof full);
    memcpy(full, "7 move 1 2", 10);
    full[CUGL_APP_EVENT_MAX_LINE] = '\n';
    full[CUGL_APP_EVENT_MAX_LINE + 1] = '\0';
    assert_ok(cugl_app_event_parse(&ev, full));
    assert_int_equal(ev.frame, 7);
    full[CUGL_APP_EVENT_MAX_LINE] = '\r';
    full[CUGL_APP_EVENT_MAX_LINE + 1] = '\n';
    full[CUGL_APP_EVENT_MAX_LINE + 2] = '\0';
    assert_ok(cugl_app_event_parse(&ev, full));
    full[CUGL_APP_EVENT_MAX_LINE] = ' '; /* 257 bytes before "\n": one too many */
    assert_status(cugl_app_event_parse(&ev, full), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(),
                        "cugl_app_event_parse: the line is longer than 256 bytes");
}

/* A file of `text` in a new temporary folder; its path is static. */
static const char *file_of(const char *text)
{
    static char path[256];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/cugl-events-XXXXXX", tmp);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

static void reads_files(void **state)
{
    (void)state;
    const char *path = file_of("# a drag, then R\n"
                               "\n"
                               "0 move 10 20\n"
                               "0 button left down\n"
                               "   # indented comment\n"
                               "3 move 40 20\r\n"
                               "5 button left up\n"
                               "9 key R down");
    cugl_app_event *events = NULL;
    size_t n = 0;
    assert_ok(cugl_app_events_read(&events, &n, path));
    unlink(path);
    assert_int_equal(n, 5);
    const cugl_app_event want[] = {
        {.frame = 0, .type = CUGL_APP_EVENT_MOVE, .x = 10, .y = 20},
        {.frame = 0, .type = CUGL_APP_EVENT_BUTTON, .code = 0, .down = true},
        {.frame = 3, .type = CUGL_APP_EVENT_MOVE, .x = 40, .y = 20},
        {.frame = 5, .type = CUGL_APP_EVENT_BUTTON, .code = 0},
        {.frame = 9, .type = CUGL_APP_EVENT_KEY, .code = 'R', .down = true},
    };
    for (size_t i = 0; i < n; i++)
        same_event(&events[i], &want[i], "file");
    cugl_app_events_free(events);
    cugl_app_events_free(NULL);

    /* An empty file is no events. */
    path = file_of("# nothing\n");
    assert_ok(cugl_app_events_read(&events, &n, path));
    unlink(path);
    assert_int_equal(n, 0);
    cugl_app_events_free(events);
}

static void refuses_bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why; /* why: after "<path>:" */
    } bad[] = {
        {"0 close\n3 move 1 2\n2 close\n", "3: '2 close': the frames go back in time"},
        {"0 close\n# ok\n1 wiggle\n",
         "3: '1 wiggle': the event is not move, button, scroll, key, resize or close"},
        {"1 key Q sideways\n", "1: '1 key Q sideways': a key goes down or up"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = file_of(bad[i].text);
        cugl_app_event *events = (cugl_app_event *)1;
        size_t n = 99;
        assert_status(cugl_app_events_read(&events, &n, path), CUGL_ERROR_INVALID_ARGUMENT);
        char want[512];
        snprintf(want, sizeof want, "cugl_app_events_read: %s:%s", path, bad[i].why);
        assert_string_equal(cugl_last_error(), want);
        /* Nothing comes back from a bad file. */
        assert_null(events);
        assert_int_equal(n, 0);
        unlink(path);
    }

    /* A line longer than the limit. */
    char text[CUGL_APP_EVENT_MAX_LINE + 16];
    memset(text, '#', sizeof text - 2);
    text[sizeof text - 2] = '\n';
    text[sizeof text - 1] = '\0';
    const char *path = file_of(text);
    cugl_app_event *events = NULL;
    size_t n = 0;
    assert_status(cugl_app_events_read(&events, &n, path), CUGL_ERROR_INVALID_ARGUMENT);
    char want[512];
    snprintf(want, sizeof want, "cugl_app_events_read: %s:1: longer than 256 bytes", path);
    assert_string_equal(cugl_last_error(), want);
    unlink(path);

    assert_status(cugl_app_events_read(&events, &n, "/nonexistent/cugl/input.txt"),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_events_read: cannot open "
                                           "/nonexistent/cugl/input.txt: No such file or "
                                           "directory");
    assert_status(cugl_app_events_read(NULL, &n, "x"), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_events_read: out is NULL");
    assert_status(cugl_app_events_read(&events, NULL, "x"), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_events_read: count is NULL");
    assert_status(cugl_app_events_read(&events, &n, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_events_read: path is NULL");
}

/* Files that never end a line, or never end: each read stops with a
 * message, never runs forever. */
static void endless_files_end(void **state)
{
    (void)state;
    cugl_app_event *events = NULL;
    size_t n = 0;
    assert_status(cugl_app_events_read(&events, &n, "/dev/zero"), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_events_read: /dev/zero:1: a NUL byte: not text");
    assert_null(events);
    assert_int_equal(n, 0);

    /* A NUL in the middle of an event line. */
    char path[256];
    snprintf(path, sizeof path, "%s", file_of("0 move 1 2\n1 mo"));
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fwrite("\0ve 3 4\n", 1, 8, f);
    fclose(f);
    assert_status(cugl_app_events_read(&events, &n, path), CUGL_ERROR_INVALID_ARGUMENT);
    char want[512];
    snprintf(want, sizeof want, "cugl_app_events_read: %s:2: a NUL byte: not text", path);
    assert_string_equal(cugl_last_error(), want);

    /* One blank line more than a file may have. */
    f = fopen(path, "wb");
    assert_non_null(f);
    for (long i = 0; i <= CUGL_APP_EVENT_MAX_LINES; i++)
        putc('\n', f);
    fclose(f);
    assert_status(cugl_app_events_read(&events, &n, path), CUGL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "cugl_app_events_read: %s: more than %d lines", path,
             CUGL_APP_EVENT_MAX_LINES);
    assert_string_equal(cugl_last_error(), want);
    assert_null(events);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endless_files_end),
        cmocka_unit_test(parses_every_kind), cmocka_unit_test(formats_back),
        cmocka_unit_test(refuses_bad_lines), cmocka_unit_test(reads_files),
        cmocka_unit_test(refuses_bad_files),
    };
    return cugl_test_run(tests);
}
