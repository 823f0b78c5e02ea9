/*
 * events.c - input events as lines of text (cugl/app.h): the format of
 * input-replay files, of --save-input's recordings, and of what a remote
 * viewer sends. One event a line:
 *
 *   <frame> move <x> <y>            the cursor, pixels from the top left
 *   <frame> button <left|right|middle> <down|up>
 *   <frame> scroll <steps>          the wheel; positive turns away from the user
 *   <frame> key <key> <down|up>     a key: a letter, digit or one of ,-./;=[\]`'
 *                                   as typed, or a name (escape, space, left,
 *                                   kp_add, f1, ...), or a GLFW key code
 *   <frame> resize <width> <height> the framebuffer's new size
 *   <frame> close                   the user asks to quit
 *
 * <frame> is the frame whose update first sees the event (from 0). Blank
 * lines and lines starting with '#' say nothing. Everything is checked:
 * a number out of range, a word not in the list, or anything left over is
 * an error naming the line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

/* Keys with names; every other key is a printable character or its code. */
static const struct {
    const char *name;
    int key;
} key_names[] = {
#define KEY_NAME(id, code, word) {word, code},
    CUGL_APP_KEY_LIST(KEY_NAME)
#undef KEY_NAME
};

/* The codes are GLFW's, so that GLFW's callbacks report them as they are. */
#define SAME_AS_GLFW(id, code, word) \
    _Static_assert(CUGL_APP_KEY_##id == GLFW_KEY_##id, "CUGL_APP_KEY_" #id " is GLFW's");
CUGL_APP_KEY_LIST(SAME_AS_GLFW)
#undef SAME_AS_GLFW
_Static_assert(CUGL_APP_KEY_LAST == GLFW_KEY_LAST, "the last key is GLFW's");
_Static_assert(CUGL_APP_KEY_A == GLFW_KEY_A && CUGL_APP_KEY_0 == GLFW_KEY_0 &&
                   CUGL_APP_KEY_GRAVE_ACCENT == GLFW_KEY_GRAVE_ACCENT,
               "typed keys are GLFW's");

static const char *const button_names[] = {"left", "right", "middle"};

/* Printable keys other than letters and digits, as GLFW codes them (ASCII). */
static const char punctuation[] = ",-./;=[\\]`'";

/* The largest cursor coordinate and framebuffer side taken. */
#define MAX_COORD 1e6
enum { MAX_SIDE = 32768 };

static int key_of(const char *word)
{
    size_t n = strlen(word);
    if (n == 1) {
        int c = toupper((unsigned char)word[0]);
        if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr(punctuation, c)))
            return c;
    }
    for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
        if (strcmp(word, key_names[i].name) == 0)
            return key_names[i].key;
    char *end;
    errno = 0;
    long code = strtol(word, &end, 10);
    if (n > 0 && *end == '\0' && errno == 0 && code >= GLFW_KEY_SPACE && code <= GLFW_KEY_LAST)
        return (int)code;
    return -1;
}

/* The key's word in a file: the character, the name, or the code. */
static void key_word(char *out, size_t size, int key)
{
    if ((key >= 'A' && key <= 'Z') || (key >= '0' && key <= '9') ||
        (key > 0 && key < 128 && strchr(punctuation, key))) {
        snprintf(out, size, "%c", key);
        return;
    }
    for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++) {
        if (key_names[i].key == key) {
            snprintf(out, size, "%s", key_names[i].name);
            return;
        }
    }
    snprintf(out, size, "%d", key);
}

static bool parse_double(const char *word, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(word, &end);
    if (end == word || *end != '\0' || errno != 0 || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_long(const char *word, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(word, &end, 10);
    if (end == word || *end != '\0' || errno != 0 || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_down(const char *word, bool *down)
{
    if (strcmp(word, "down") == 0)
        *down = true;
    else if (strcmp(word, "up") == 0)
        *down = false;
    else
        return false;
    return true;
}

/* The words of a line, split at blanks, in `copy`. */
enum { MAX_WORDS = 5 };

static int split(char *copy, char *words[MAX_WORDS + 1])
{
    int n = 0;
    char *rest = NULL;
    for (char *w = strtok_r(copy, " \t\r\n", &rest); w; w = strtok_r(NULL, " \t\r\n", &rest)) {
        if (n == MAX_WORDS + 1)
            break;
        words[n++] = w;
    }
    return n;
}

/* Why `line` is not an event, or NULL when *ev holds it. */
static const char *parse(cugl_app_event *ev, char *copy)
{
    char *w[MAX_WORDS + 1];
    int n = split(copy, w);
    if (n < 2)
        return "expected '<frame> <event> ...'";
    long frame;
    if (!parse_long(w[0], 0, CUGL_APP_EVENT_MAX_FRAME, &frame))
        return "the frame is not a number from 0 to 1000000000";
    *ev = (cugl_app_event){.frame = frame};
    const char *what = w[1];
    int want;
    if (strcmp(what, "move") == 0) {
        ev->type = CUGL_APP_EVENT_MOVE;
        want = 4;
        if (n == want && (!parse_double(w[2], -MAX_COORD, MAX_COORD, &ev->x) ||
                          !parse_double(w[3], -MAX_COORD, MAX_COORD, &ev->y)))
            return "move takes x and y, numbers from -1e6 to 1e6";
    } else if (strcmp(what, "button") == 0) {
        ev->type = CUGL_APP_EVENT_BUTTON;
        want = 4;
        if (n == want) {
            ev->code = -1;
            for (int i = 0; i < 3; i++)
                if (strcmp(w[2], button_names[i]) == 0)
                    ev->code = i;
            if (ev->code < 0)
                return "the button is not left, right or middle";
            if (!parse_down(w[3], &ev->down))
                return "a button goes down or up";
        }
    } else if (strcmp(what, "scroll") == 0) {
        ev->type = CUGL_APP_EVENT_SCROLL;
        want = 3;
        if (n == want && !parse_double(w[2], -1000.0, 1000.0, &ev->y))
            return "scroll takes a number of steps from -1000 to 1000";
    } else if (strcmp(what, "key") == 0) {
        ev->type = CUGL_APP_EVENT_KEY;
        want = 4;
        if (n == want) {
            ev->code = key_of(w[2]);
            if (ev->code < 0)
                return "unknown key (a letter, digit, ,-./;=[\\]`', a name such as escape "
                       "or kp_add, or a GLFW key code)";
            if (!parse_down(w[3], &ev->down))
                return "a key goes down or up";
        }
    } else if (strcmp(what, "resize") == 0) {
        ev->type = CUGL_APP_EVENT_RESIZE;
        want = 4;
        long width, height;
        if (n == want) {
            if (!parse_long(w[2], 1, MAX_SIDE, &width) || !parse_long(w[3], 1, MAX_SIDE, &height))
                return "resize takes a width and a height from 1 to 32768";
            ev->width = (int)width;
            ev->height = (int)height;
        }
    } else if (strcmp(what, "close") == 0) {
        ev->type = CUGL_APP_EVENT_CLOSE;
        want = 2;
    } else {
        return "the event is not move, button, scroll, key, resize or close";
    }
    if (n < want)
        return "too few words";
    if (n > want)
        return "too many words";
    return NULL;
}

CUGL_API cugl_status cugl_app_event_parse(cugl_app_event *out, const char *line)
{
    if (!out || !line)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is NULL", !out ? "out" : "line");
    /* The line's end ("\n" or "\r\n") does not count, as in a file. */
    size_t len = strnlen(line, CUGL_APP_EVENT_MAX_LINE + 3);
    if (len > 0 && line[len - 1] == '\n')
        len--;
    if (len > 0 && line[len - 1] == '\r')
        len--;
    if (len > CUGL_APP_EVENT_MAX_LINE)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "the line is longer than %d bytes",
                          CUGL_APP_EVENT_MAX_LINE);
    char copy[CUGL_APP_EVENT_MAX_LINE + 1];
    memcpy(copy, line, len);
    copy[len] = '\0';
    const char *why = parse(out, copy);
    if (why)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "'%s': %s", line, why);
    return CUGL_OK;
}

const char *cugl__app_event_check(const cugl_app_event *ev)
{
    if (ev->frame < 0 || ev->frame > CUGL_APP_EVENT_MAX_FRAME)
        return "the frame is not from 0 to 1000000000";
    switch (ev->type) {
    case CUGL_APP_EVENT_MOVE:
        if (!isfinite(ev->x) || !isfinite(ev->y) || fabs(ev->x) > MAX_COORD ||
            fabs(ev->y) > MAX_COORD)
            return "a move's x and y are not from -1e6 to 1e6";
        return NULL;
    case CUGL_APP_EVENT_BUTTON:
        return ev->code < 0 || ev->code > 2 ? "the button is not 0, 1 or 2 (left, right, middle)"
                                             : NULL;
    case CUGL_APP_EVENT_SCROLL:
        return !isfinite(ev->y) || fabs(ev->y) > 1000.0 ? "a scroll is not from -1000 to 1000 steps"
                                                         : NULL;
    case CUGL_APP_EVENT_KEY:
        return ev->code < GLFW_KEY_SPACE || ev->code > GLFW_KEY_LAST
                   ? "the key is not a GLFW key code (32 to 348)"
                   : NULL;
    case CUGL_APP_EVENT_RESIZE:
        return ev->width < 1 || ev->width > MAX_SIDE || ev->height < 1 || ev->height > MAX_SIDE
                   ? "a resize's width and height are not from 1 to 32768"
                   : NULL;
    case CUGL_APP_EVENT_CLOSE:
        return NULL;
    }
    return "the type is not a cugl_app_event_type";
}

CUGL_API int cugl_app_event_format(char *out, size_t size, const cugl_app_event *ev)
{
    /* As snprintf: out may be NULL only with size 0 (to ask the length). */
    if (!ev || (!out && size) || cugl__app_event_check(ev))
        return -1;
    char key[16];
    switch (ev->type) {
    case CUGL_APP_EVENT_MOVE:
        return snprintf(out, size, "%ld move %.17g %.17g", ev->frame, ev->x, ev->y);
    case CUGL_APP_EVENT_BUTTON:
        return snprintf(out, size, "%ld button %s %s", ev->frame, button_names[ev->code],
                        ev->down ? "down" : "up");
    case CUGL_APP_EVENT_SCROLL:
        return snprintf(out, size, "%ld scroll %.17g", ev->frame, ev->y);
    case CUGL_APP_EVENT_KEY:
        key_word(key, sizeof key, ev->code);
        return snprintf(out, size, "%ld key %s %s", ev->frame, key, ev->down ? "down" : "up");
    case CUGL_APP_EVENT_RESIZE:
        return snprintf(out, size, "%ld resize %d %d", ev->frame, ev->width, ev->height);
    case CUGL_APP_EVENT_CLOSE:
        return snprintf(out, size, "%ld close", ev->frame);
    }
    return -1;
}

static bool blank(const char *line)
{
    while (*line == ' ' || *line == '\t' || *line == '\r' || *line == '\n')
        line++;
    return *line == '\0' || *line == '#';
}

/* The next line of `f` into line[size] (its newline kept, NUL-ended): its
 * length, size - 1 without a newline when it does not fit; 0 at the end;
 * -1 for a NUL byte (not text). At most size - 1 bytes are read, so an
 * endless file without lines (/dev/zero) ends here too. */
static long read_line(FILE *f, char *line, size_t size)
{
    size_t n = 0;
    int c;
    while (n + 1 < size && (c = getc(f)) != EOF) {
        if (c == '\0')
            return -1;
        line[n++] = (char)c;
        if (c == '\n')
            break;
    }
    line[n] = '\0';
    return (long)n;
}

CUGL_API cugl_status cugl_app_events_read(cugl_app_event **out, size_t *count, const char *path)
{
    if (!out || !count || !path)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !out ? "out" : !count ? "count" : "path");
    *out = NULL;
    *count = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "cannot open %s: %s", path,
                          strerror(errno));
    cugl_app_event *events = NULL;
    size_t n = 0, capacity = 0;
    cugl_status st = CUGL_OK;
    char line[CUGL_APP_EVENT_MAX_LINE + 2];
    long number = 0;
    long last_frame = 0;
    long got;
    while (st == CUGL_OK && (got = read_line(f, line, sizeof line)) != 0) {
        number++;
        size_t len = (size_t)got;
        if (got < 0) {
            st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s:%ld: a NUL byte: not text",
                            path, number);
            break;
        }
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s:%ld: longer than %d bytes",
                            path, number, CUGL_APP_EVENT_MAX_LINE);
            break;
        }
        if (number > CUGL_APP_EVENT_MAX_LINES) {
            st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s: more than %d lines", path,
                            CUGL_APP_EVENT_MAX_LINES);
            break;
        }
        if (blank(line))
            continue;
        if (n == CUGL_APP_EVENT_MAX_COUNT) {
            st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                            "%s:%ld: more than %d events", path,
                            number, CUGL_APP_EVENT_MAX_COUNT);
            break;
        }
        if (n == capacity) {
            size_t more = capacity ? 2 * capacity : 64;
            cugl_app_event *grown = realloc(events, more * sizeof *events);
            if (!grown) {
                st = cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__,
                                "no memory for %zu events", more);
                break;
            }
            events = grown;
            capacity = more;
        }
        char copy[sizeof line];
        memcpy(copy, line, len + 1);
        const char *why = parse(&events[n], copy);
        if (!why && events[n].frame < last_frame)
            why = "the frames go back in time";
        if (why) {
            line[strcspn(line, "\r\n")] = '\0';
            st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                            "%s:%ld: '%s': %s", path, number, line,
                            why);
            break;
        }
        last_frame = events[n].frame;
        n++;
    }
    if (st == CUGL_OK && ferror(f))
        st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "reading %s failed", path);
    fclose(f);
    if (st != CUGL_OK) {
        free(events);
        return st;
    }
    *out = events;
    *count = n;
    return CUGL_OK;
}

CUGL_API void cugl_app_events_free(cugl_app_event *events) { free(events); }
