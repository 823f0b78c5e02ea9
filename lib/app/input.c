/*
 * input.c - a context's input, whatever it comes from: a window's GLFW
 * callbacks, a replayed list of events, or events pushed by another
 * thread (a remote viewer). Every one of them goes through apply(), so a
 * replay drives a program exactly as the mouse and keys did, headless
 * too, and a recording holds what the program saw.
 *
 * Events pile up in `pending`; each present publishes it as the frame's
 * input (cugl_app_context_input, cugl_app_key_down).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

/* Events are applied while cugl_app_context_present runs (GLFW's callbacks
 * in its poll, replayed and pushed events at its start): what fails as
 * one applies (a headless resize) is that function's failure. */
static const char applied_in[] = "cugl_app_context_present";

static cugl_status events_append(cugl__app_events *list, const cugl_app_event *ev,
                                 const char *who)
{
    if (list->count == list->capacity) {
        size_t more = list->capacity ? 2 * list->capacity : 16;
        cugl_app_event *grown = realloc(list->items, more * sizeof *grown);
        if (!grown)
            return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for %zu events",
                              more);
        list->items = grown;
        list->capacity = more;
    }
    list->items[list->count++] = *ev;
    return CUGL_OK;
}

static void events_free(cugl__app_events *list)
{
    free(list->items);
    *list = (cugl__app_events){0};
}

cugl_status cugl__app_input_init(cugl_app_context *ctx, const char *who)
{
    ctx->cursor_entered = true;
    if (pthread_mutex_init(&ctx->pushed_lock, NULL) != 0)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who,
                          "cannot make the input queue's lock");
    return CUGL_OK;
}

void cugl__app_input_free(cugl_app_context *ctx, const char *who)
{
    if (ctx->record.file)
        (void)cugl__app_file_commit(&ctx->record, who, ctx->record_path);
    free(ctx->record_path);
    ctx->record_path = NULL;
    events_free(&ctx->replay);
    events_free(&ctx->pushed);
    events_free(&ctx->taking);
    events_free(&ctx->taken);
    pthread_mutex_destroy(&ctx->pushed_lock);
}

static void write_down(cugl_app_context *ctx, const cugl_app_event *ev, long frame)
{
    if (!ctx->record.file)
        return;
    cugl_app_event stamped = *ev;
    stamped.frame = frame;
    char line[CUGL_APP_EVENT_MAX_LINE + 1];
    int n = cugl_app_event_format(line, sizeof line, &stamped);
    if (n < 0 || (size_t)n >= sizeof line || fprintf(ctx->record.file, "%s\n", line) < 0)
        ctx->record_failed = true;
}

static void held_modifiers(cugl_app_context *ctx)
{
    const bool *k = ctx->pending_keys;
    ctx->pending.shift = k[GLFW_KEY_LEFT_SHIFT] || k[GLFW_KEY_RIGHT_SHIFT];
    ctx->pending.ctrl = k[GLFW_KEY_LEFT_CONTROL] || k[GLFW_KEY_RIGHT_CONTROL];
}

/*
 * One event into `pending`, first seen by frame `frame`. `from_glfw`: the
 * window reported it; else it asks the window for what it says (a resize,
 * a close), and the window's own report of the result is what is recorded.
 */
static void apply(cugl_app_context *ctx, const cugl_app_event *ev, long frame, bool from_glfw)
{
    cugl_app_input *in = &ctx->pending;
    bool record = true;
    switch (ev->type) {
    case CUGL_APP_EVENT_MOVE:
        /* Where the cursor comes in from outside is no motion. */
        if (!ctx->cursor_entered) {
            in->dx += ev->x - in->x;
            in->dy += ev->y - in->y;
        }
        ctx->cursor_entered = false;
        in->x = ev->x;
        in->y = ev->y;
        break;
    case CUGL_APP_EVENT_BUTTON:
        if (ev->code == 0)
            in->left = ev->down;
        else if (ev->code == 1)
            in->right = ev->down;
        else
            in->middle = ev->down;
        /* A press that the same frame releases still shows as held in
         * it: a drag or a click between two presents is not lost. */
        if (ev->down)
            ctx->buttons_pressed[ev->code] = true;
        break;
    case CUGL_APP_EVENT_SCROLL:
        in->scroll += ev->y;
        break;
    case CUGL_APP_EVENT_KEY:
        ctx->pending_keys[ev->code] = ev->down;
        held_modifiers(ctx);
        if (ev->code == GLFW_KEY_ESCAPE && ev->down)
            ctx->close_requested = true;
        break;
    case CUGL_APP_EVENT_RESIZE:
        if (ctx->window && !from_glfw) {
            /* The window's framebuffer callback reports what it became. */
            glfwSetWindowSize(ctx->window, ev->width, ev->height);
            record = false;
        } else if (ctx->window) {
            ctx->width = ev->width;
            ctx->height = ev->height;
        } else if (ev->width == ctx->width && ev->height == ctx->height) {
            /* The size it has: nothing to rebuild. */
        } else if (cugl__app_offscreen_resize(ctx, ev->width, ev->height, applied_in) != CUGL_OK) {
            /* Kept at its size; the message stays for the caller to see. */
            record = false;
        }
        break;
    case CUGL_APP_EVENT_CLOSE:
        ctx->close_requested = true;
        break;
    }
    if (ctx->close_requested && ctx->window)
        glfwSetWindowShouldClose(ctx->window, GLFW_TRUE);
    if (!record)
        return;
    write_down(ctx, ev, frame);
    cugl_app_event taken = *ev;
    taken.frame = frame;
    if (ctx->taking.count == CUGL_APP_EVENT_MAX_PER_FRAME ||
        events_append(&ctx->taking, &taken, applied_in) != CUGL_OK)
        ctx->taking_lost++;
}

void cugl__app_input_apply(cugl_app_context *ctx, const cugl_app_event *ev)
{
    apply(ctx, ev, ctx->frame + 1, true);
}

static void publish(cugl_app_context *ctx)
{
    ctx->input = ctx->pending;
    /* Held now, or pressed since the previous present (and released
     * again: a click or drag the frame holds whole). */
    ctx->input.left = ctx->pending.left || ctx->buttons_pressed[0];
    ctx->input.right = ctx->pending.right || ctx->buttons_pressed[1];
    ctx->input.middle = ctx->pending.middle || ctx->buttons_pressed[2];
    memset(ctx->buttons_pressed, 0, sizeof ctx->buttons_pressed);
    memcpy(ctx->keys, ctx->pending_keys, sizeof ctx->keys);
    ctx->pending.dx = ctx->pending.dy = ctx->pending.scroll = 0;
    /* The frame's events change places with the list that fills next. */
    cugl__app_events done = ctx->taken;
    ctx->taken = ctx->taking;
    ctx->taken_lost = ctx->taking_lost;
    ctx->taking = done;
    ctx->taking.count = 0;
    ctx->taking_lost = 0;
}

/* Replayed events due by frame `frame`. */
static void apply_replay(cugl_app_context *ctx, long frame)
{
    while (ctx->replay_next < ctx->replay.count &&
           ctx->replay.items[ctx->replay_next].frame <= frame)
        apply(ctx, &ctx->replay.items[ctx->replay_next++], frame, false);
}

cugl_status cugl__app_input_present(cugl_app_context *ctx)
{
    long next = ctx->frame + 1;
    cugl__app_events pushed;
    pthread_mutex_lock(&ctx->pushed_lock);
    pushed = ctx->pushed;
    ctx->pushed = (cugl__app_events){0};
    ctx->pushed_generation++;
    pthread_mutex_unlock(&ctx->pushed_lock);
    /* Of the resizes, the last alone: each one rebuilds a headless
     * context's framebuffer, which at 8192 x 8192 takes a fraction of a
     * second, and the frame shows one size. */
    size_t last_resize = pushed.count;
    for (size_t i = 0; i < pushed.count; i++)
        if (pushed.items[i].type == CUGL_APP_EVENT_RESIZE)
            last_resize = i;
    for (size_t i = 0; i < pushed.count; i++)
        if (pushed.items[i].type != CUGL_APP_EVENT_RESIZE || i == last_resize)
            apply(ctx, &pushed.items[i], next, false);
    events_free(&pushed);
    apply_replay(ctx, next);
    publish(ctx);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_context_push_event(cugl_app_context *ctx, const cugl_app_event *ev)
{
    if (!ctx || !ev)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL", !ctx ? "ctx" : "ev");
    return cugl__app_push_shared(ctx, ev, NULL, 0, __func__);
}

cugl_status cugl__app_push_shared(cugl_app_context *ctx, const cugl_app_event *ev,
                                  cugl__app_share *share, size_t quota, const char *who)
{
    const char *why = cugl__app_event_check(ev);
    if (why)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s", why);
    pthread_mutex_lock(&ctx->pushed_lock);
    if (share && share->generation != ctx->pushed_generation)
        *share = (cugl__app_share){.generation = ctx->pushed_generation};
    cugl_status st = CUGL_OK;
    cugl_app_event *last = share && share->count ? &ctx->pushed.items[share->last] : NULL;
    if (ev->type == CUGL_APP_EVENT_MOVE && last && last->type == CUGL_APP_EVENT_MOVE) {
        last->x = ev->x;
        last->y = ev->y;
    } else if (share && share->count >= quota) {
        st = cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                        "%zu events of this source wait for the next present already", quota);
    } else if (ctx->pushed.count >= CUGL_APP_EVENT_MAX_PENDING) {
        st = cugl__fail(CUGL_ERROR_INVALID_STATE, who,
                        "%d events wait for the next present already",
                        CUGL_APP_EVENT_MAX_PENDING);
    } else if ((st = events_append(&ctx->pushed, ev, who)) == CUGL_OK && share) {
        share->last = ctx->pushed.count - 1;
        share->count++;
    }
    pthread_mutex_unlock(&ctx->pushed_lock);
    return st;
}

CUGL_API cugl_status cugl_app_context_replay(cugl_app_context *ctx, const cugl_app_event *events,
                                             size_t count)
{
    if (!ctx || (!events && count))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !ctx ? "ctx" : "events");
    for (size_t i = 0; i < count; i++) {
        const char *why = cugl__app_event_check(&events[i]);
        if (!why && i > 0 && events[i].frame < events[i - 1].frame)
            why = "its frame comes before the previous event's";
        if (why)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "event %zu: %s", i, why);
    }
    cugl__app_events copy = {0};
    for (size_t i = 0; i < count; i++) {
        cugl_status st = events_append(&copy, &events[i], __func__);
        if (st != CUGL_OK) {
            events_free(&copy);
            return st;
        }
    }
    events_free(&ctx->replay);
    ctx->replay = copy;
    ctx->replay_next = 0;
    /* What is due already is seen by the frame about to be made. */
    apply_replay(ctx, ctx->frame);
    publish(ctx);
    return CUGL_OK;
}

CUGL_API bool cugl_app_context_replay_done(const cugl_app_context *ctx)
{
    return !ctx || ctx->replay_next == ctx->replay.count;
}

CUGL_API cugl_status cugl_app_context_record(cugl_app_context *ctx, const char *path)
{
    CUGL__CHECK_NOT_NULL(ctx);
    cugl_status st = CUGL_OK;
    if (ctx->record.file) {
        /* The recording becomes the file now, whole, or not at all. Lines
         * still buffered are written first: a full disk is a line that
         * could not be written. */
        if (fflush(ctx->record.file) != 0 || ferror(ctx->record.file))
            ctx->record_failed = true;
        if (ctx->record_failed) {
            cugl__app_file_abandon(&ctx->record);
            st = cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                            "writing the recorded events to %s failed (disk full?); what "
                            "was there is left as it was", ctx->record_path);
        } else {
            st = cugl__app_file_commit(&ctx->record, __func__, ctx->record_path);
        }
        ctx->record_failed = false;
        free(ctx->record_path);
        ctx->record_path = NULL;
    }
    if (!path || st != CUGL_OK)
        return st;
    if (!(ctx->record_path = strdup(path)))
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a file name");
    st = cugl__app_file_open(&ctx->record, __func__, path);
    if (st != CUGL_OK) {
        free(ctx->record_path);
        ctx->record_path = NULL;
        return st;
    }
    if (fprintf(ctx->record.file, "# cugl input events: <frame> <event> ...\n") < 0)
        ctx->record_failed = true;
    return CUGL_OK;
}

CUGL_API const cugl_app_event *cugl_app_context_events(const cugl_app_context *ctx,
                                                       size_t *count, size_t *lost)
{
    if (count)
        *count = ctx ? ctx->taken.count : 0;
    if (lost)
        *lost = ctx ? ctx->taken_lost : 0;
    return ctx && ctx->taken.count ? ctx->taken.items : NULL;
}

CUGL_API const cugl_app_input *cugl_app_context_input(const cugl_app_context *ctx)
{
    static const cugl_app_input none;
    return ctx ? &ctx->input : &none;
}

CUGL_API bool cugl_app_key_down(const cugl_app_context *ctx, int key)
{
    if (!ctx || key < CUGL_APP_KEY_FIRST || key > CUGL_APP_KEY_LAST)
        return false;
    return ctx->keys[key];
}

CUGL_API int cugl_app_key_presses(const cugl_app_context *ctx, int key)
{
    size_t count = 0;
    const cugl_app_event *ev = cugl_app_context_events(ctx, &count, NULL);
    int presses = 0;
    for (size_t i = 0; i < count; i++)
        presses += ev[i].type == CUGL_APP_EVENT_KEY && ev[i].code == key && ev[i].down;
    return presses;
}

CUGL_API bool cugl_app_context_should_close(const cugl_app_context *ctx)
{
    return ctx && (ctx->close_requested || (ctx->window && glfwWindowShouldClose(ctx->window)));
}
