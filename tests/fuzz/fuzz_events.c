/*
 * fuzz_events: the input-replay format (cugl/app.h) on the input's lines.
 * Nothing may crash or trip a sanitizer; a line parses to an event that
 * cugl_app_event_format writes back as a line that parses to the same
 * event, or it is refused with a message; a file of the lines is read
 * whole (frames never decreasing) or refused with a message naming a line.
 */
#include <string.h>
#include <unistd.h>

#include <cugl/app.h>

#include "layout_oracle.h"

static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap);
static void run_one(const uint8_t *data, size_t size);

#include "fuzz_main.h"

static bool same(const cugl_app_event *a, const cugl_app_event *b)
{
    return a->frame == b->frame && a->type == b->type && a->x == b->x && a->y == b->y &&
           a->code == b->code && a->down == b->down && a->width == b->width &&
           a->height == b->height;
}

static void run_one(const uint8_t *data, size_t size)
{
    char text[FUZZ_MAX_INPUT + 1];
    fuzz_text(text, data, size);
    if (size > FUZZ_MAX_INPUT)
        size = FUZZ_MAX_INPUT;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        cugl_app_event ev, back;
        memset(&ev, 0xA5, sizeof ev);
        if (cugl_app_event_parse(&ev, line) != CUGL_OK) {
            if (!cugl_last_error()[0])
                FUZZ_VIOLATED("events: a refusal without a message: '%.60s'", line);
            continue;
        }
        char out[CUGL_APP_EVENT_MAX_LINE + 1];
        int n = cugl_app_event_format(out, sizeof out, &ev);
        if (n < 0 || (size_t)n >= sizeof out)
            FUZZ_VIOLATED("events: '%.60s' parsed to an event that formats to %d bytes", line, n);
        if (cugl_app_event_parse(&back, out) != CUGL_OK || !same(&ev, &back))
            FUZZ_VIOLATED("events: '%.60s' -> '%s' does not read back the same", line, out);
    }
#ifndef CUGL_LIBFUZZER
    /* The whole input as a file. */
    char path[] = "/tmp/cugl-fuzz-events-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return;
    }
    close(fd);
    cugl_app_event *events = NULL;
    size_t count = 0;
    cugl_status st = cugl_app_events_read(&events, &count, path);
    unlink(path);
    if (st != CUGL_OK && !strstr(cugl_last_error(), path))
        FUZZ_VIOLATED("events: a refused file's message does not name it: %s", cugl_last_error());
    for (size_t i = 1; st == CUGL_OK && i < count; i++)
        if (events[i].frame < events[i - 1].frame)
            FUZZ_VIOLATED("events: a file read with frames going back");
    cugl_app_events_free(events);
#endif
}

/* Lines made of the format's words and numbers, sometimes bent. */
static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap)
{
    static const char *const words[] = {
        "move", "button", "scroll", "key", "resize", "close", "left", "right", "middle",
        "down", "up", "escape", "kp_add", "f1", "f13", "a", "Z", "9", ",", "'", "left_shift",
        "1e308", "-0", "nan", "inf", "0x10", "1000000001", "999999999", "-1", "3.5", "#",
        "16384", "16385", "65536", "42", "0", "\t", "  ", "\r",
    };
    size_t len = 0;
    int lines = (int)oracle_range(rng, 0, 8);
    for (int l = 0; l < lines && len < cap; l++) {
        char frame[24];
        snprintf(frame, sizeof frame, "%lld ", (long long)oracle_range(rng, -2, 1000000002));
        if (oracle_range(rng, 0, 7))
            fuzz_put(buf, &len, cap, frame);
        int n = (int)oracle_range(rng, 0, 5);
        for (int i = 0; i < n; i++) {
            fuzz_put(buf, &len, cap, words[oracle_range(rng, 0, sizeof words / sizeof words[0] - 1)]);
            fuzz_put(buf, &len, cap, " ");
        }
        if (oracle_range(rng, 0, 15) == 0)
            for (int i = 0; i < 300 && len < cap; i++) /* a line too long */
                buf[len++] = '9';
        if (oracle_range(rng, 0, 15) == 0 && len < cap)
            buf[len++] = (uint8_t)oracle_range(rng, 0, 255);
        fuzz_put(buf, &len, cap, "\n");
    }
    return len;
}
