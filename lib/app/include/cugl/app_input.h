/**
 * @file cugl/app_input.h
 * Input: the state of a frame, and events as values and text.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_INPUT_H
#define CUGL_APP_INPUT_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/* ---- Keys ---------------------------------------------------------------------- */

/**
 * The keys named in the event text format, one row each: the name after
 * CUGL_APP_KEY_, its code, and its word in the text ("escape"). The codes
 * are GLFW's (GLFW_KEY_*), so a program may use either. Letters, digits
 * and the punctuation keys ,-./;=[\]`' are their characters' codes
 * (CUGL_APP_KEY_A = 'A'), written in the text as typed.
 */
#define CUGL_APP_KEY_LIST(X) \
    X(SPACE, 32, "space") \
    X(ESCAPE, 256, "escape") \
    X(ENTER, 257, "enter") \
    X(TAB, 258, "tab") \
    X(BACKSPACE, 259, "backspace") \
    X(INSERT, 260, "insert") \
    X(DELETE, 261, "delete") \
    X(RIGHT, 262, "right") \
    X(LEFT, 263, "left") \
    X(DOWN, 264, "down") \
    X(UP, 265, "up") \
    X(PAGE_UP, 266, "page_up") \
    X(PAGE_DOWN, 267, "page_down") \
    X(HOME, 268, "home") \
    X(END, 269, "end") \
    X(CAPS_LOCK, 280, "caps_lock") \
    X(SCROLL_LOCK, 281, "scroll_lock") \
    X(NUM_LOCK, 282, "num_lock") \
    X(PRINT_SCREEN, 283, "print_screen") \
    X(PAUSE, 284, "pause") \
    X(F1, 290, "f1") \
    X(F2, 291, "f2") \
    X(F3, 292, "f3") \
    X(F4, 293, "f4") \
    X(F5, 294, "f5") \
    X(F6, 295, "f6") \
    X(F7, 296, "f7") \
    X(F8, 297, "f8") \
    X(F9, 298, "f9") \
    X(F10, 299, "f10") \
    X(F11, 300, "f11") \
    X(F12, 301, "f12") \
    X(F13, 302, "f13") \
    X(F14, 303, "f14") \
    X(F15, 304, "f15") \
    X(F16, 305, "f16") \
    X(F17, 306, "f17") \
    X(F18, 307, "f18") \
    X(F19, 308, "f19") \
    X(F20, 309, "f20") \
    X(F21, 310, "f21") \
    X(F22, 311, "f22") \
    X(F23, 312, "f23") \
    X(F24, 313, "f24") \
    X(F25, 314, "f25") \
    X(KP_0, 320, "kp_0") \
    X(KP_1, 321, "kp_1") \
    X(KP_2, 322, "kp_2") \
    X(KP_3, 323, "kp_3") \
    X(KP_4, 324, "kp_4") \
    X(KP_5, 325, "kp_5") \
    X(KP_6, 326, "kp_6") \
    X(KP_7, 327, "kp_7") \
    X(KP_8, 328, "kp_8") \
    X(KP_9, 329, "kp_9") \
    X(KP_DECIMAL, 330, "kp_decimal") \
    X(KP_DIVIDE, 331, "kp_divide") \
    X(KP_MULTIPLY, 332, "kp_multiply") \
    X(KP_SUBTRACT, 333, "kp_subtract") \
    X(KP_ADD, 334, "kp_add") \
    X(KP_ENTER, 335, "kp_enter") \
    X(KP_EQUAL, 336, "kp_equal") \
    X(LEFT_SHIFT, 340, "left_shift") \
    X(LEFT_CONTROL, 341, "left_control") \
    X(LEFT_ALT, 342, "left_alt") \
    X(LEFT_SUPER, 343, "left_super") \
    X(RIGHT_SHIFT, 344, "right_shift") \
    X(RIGHT_CONTROL, 345, "right_control") \
    X(RIGHT_ALT, 346, "right_alt") \
    X(RIGHT_SUPER, 347, "right_super") \
    X(MENU, 348, "menu")

/**
 * Key codes (cugl_app_key_down, cugl_app_event.code of a key event):
 * CUGL_APP_KEY_LIST's (CUGL_APP_KEY_ESCAPE, CUGL_APP_KEY_F1,
 * CUGL_APP_KEY_LEFT_SHIFT, ...), CUGL_APP_KEY_0 to _9, CUGL_APP_KEY_A to _Z,
 * and the punctuation keys (CUGL_APP_KEY_COMMA, _MINUS, _PERIOD, _SLASH,
 * _SEMICOLON, _EQUAL, _LEFT_BRACKET, _BACKSLASH, _RIGHT_BRACKET,
 * _GRAVE_ACCENT, _APOSTROPHE).
 */
enum {
    /** @cond */
#define CUGL__APP_KEY_ENUM(id, code, word) CUGL_APP_KEY_##id = code,
    CUGL_APP_KEY_LIST(CUGL__APP_KEY_ENUM)
#undef CUGL__APP_KEY_ENUM
    CUGL_APP_KEY_0 = 48,
    CUGL_APP_KEY_1 = 49,
    CUGL_APP_KEY_2 = 50,
    CUGL_APP_KEY_3 = 51,
    CUGL_APP_KEY_4 = 52,
    CUGL_APP_KEY_5 = 53,
    CUGL_APP_KEY_6 = 54,
    CUGL_APP_KEY_7 = 55,
    CUGL_APP_KEY_8 = 56,
    CUGL_APP_KEY_9 = 57,
    CUGL_APP_KEY_A = 65,
    CUGL_APP_KEY_B = 66,
    CUGL_APP_KEY_C = 67,
    CUGL_APP_KEY_D = 68,
    CUGL_APP_KEY_E = 69,
    CUGL_APP_KEY_F = 70,
    CUGL_APP_KEY_G = 71,
    CUGL_APP_KEY_H = 72,
    CUGL_APP_KEY_I = 73,
    CUGL_APP_KEY_J = 74,
    CUGL_APP_KEY_K = 75,
    CUGL_APP_KEY_L = 76,
    CUGL_APP_KEY_M = 77,
    CUGL_APP_KEY_N = 78,
    CUGL_APP_KEY_O = 79,
    CUGL_APP_KEY_P = 80,
    CUGL_APP_KEY_Q = 81,
    CUGL_APP_KEY_R = 82,
    CUGL_APP_KEY_S = 83,
    CUGL_APP_KEY_T = 84,
    CUGL_APP_KEY_U = 85,
    CUGL_APP_KEY_V = 86,
    CUGL_APP_KEY_W = 87,
    CUGL_APP_KEY_X = 88,
    CUGL_APP_KEY_Y = 89,
    CUGL_APP_KEY_Z = 90,
    CUGL_APP_KEY_APOSTROPHE = 39,
    CUGL_APP_KEY_COMMA = 44,
    CUGL_APP_KEY_MINUS = 45,
    CUGL_APP_KEY_PERIOD = 46,
    CUGL_APP_KEY_SLASH = 47,
    CUGL_APP_KEY_SEMICOLON = 59,
    CUGL_APP_KEY_EQUAL = 61,
    CUGL_APP_KEY_LEFT_BRACKET = 91,
    CUGL_APP_KEY_BACKSLASH = 92,
    CUGL_APP_KEY_RIGHT_BRACKET = 93,
    CUGL_APP_KEY_GRAVE_ACCENT = 96,
    /** @endcond */
    CUGL_APP_KEY_FIRST = CUGL_APP_KEY_SPACE, /**< the smallest key code */
    CUGL_APP_KEY_LAST = CUGL_APP_KEY_MENU,   /**< the largest key code */
};

/* ---- Input: a window's, replayed, or pushed (see "Input events" below) ----- */

/** A context's input in one frame (cugl_app_context_input). */
typedef struct cugl_app_input {
    double x,             /**< cursor, pixels from the left */
        y;                /**< cursor, pixels from the top */
    double dx,            /**< cursor motion since the previous present, pixels rightwards */
        dy;               /**< cursor motion since the previous present, pixels downwards */
    double scroll;        /**< wheel steps since the previous present */
    bool left,            /**< left button held, or pressed since the previous present
                               (a press and release between two presents, a click or a
                               drag one frame holds whole, shows for that frame) */
        right,            /**< right button, as left */
        middle;           /**< middle button, as left */
    bool shift,           /**< a Shift key held */
        ctrl;             /**< a Control key held */
} cugl_app_input;

/**
 * This frame's input (updated by present).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @return the input, held by the context (valid while it lives; each present and replay
 *   rewrites it); for NULL, a static input of zeros.
 */
CUGL_API const cugl_app_input *cugl_app_context_input(const cugl_app_context *ctx);
/**
 * Whether a key is held.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, or NULL.
 * @param key the key's code: CUGL_APP_KEY_* (GLFW_KEY_* alike).
 * @return true when this frame's input holds it down; false for NULL or a code outside
 *   CUGL_APP_KEY_FIRST .. CUGL_APP_KEY_LAST.
 */
CUGL_API bool cugl_app_key_down(const cugl_app_context *ctx, int key);
/**
 * How many times a key went down in this frame's events
 * (cugl_app_context_events): the input for a key that toggles or steps
 * something. A press and release between two presents counts, which the
 * held state (cugl_app_key_down) never shows; a key held over many frames
 * counts once, in the frame it went down (a window's repeats are no events).
 * @thread_safety The thread that uses the context.
 * @param ctx the context, or NULL.
 * @param key the key's code: CUGL_APP_KEY_* (GLFW_KEY_* alike).
 * @return the presses; 0 for NULL.
 */
CUGL_API int cugl_app_key_presses(const cugl_app_context *ctx, int key);

/* ---- Input events ------------------------------------------------------------ */

/*
 * What a window's callbacks report, as values: the unit of input replay
 * (--input), of recordings (--save-input) and of remote viewers. An event
 * enters a context's input the way GLFW's do (cugl_app_context_push_event,
 * cugl_app_context_replay), and a context can write down every event it
 * takes (cugl_app_context_record). As text, one event a line:
 *
 *   <frame> move <x> <y>            the cursor, pixels from the top left
 *   <frame> button <left|right|middle> <down|up>
 *   <frame> scroll <steps>          the wheel; positive turns away from the user
 *   <frame> key <key> <down|up>     a letter, digit or one of ,-./;=[\]`' as
 *                                   typed, a name (escape, space, left, up,
 *                                   kp_add, f1, left_shift, ...: the words of
 *                                   CUGL_APP_KEY_LIST) or a key code
 *   <frame> resize <width> <height> the framebuffer's new size
 *   <frame> close                   the user asks to quit
 *
 * <frame> is the frame whose update first sees the event, counted from 0
 * by the context's presents. Blank lines and '#' lines are comments.
 */
/** What an event reports: one value for each event word of the text format above. */
typedef enum cugl_app_event_type {
    CUGL_APP_EVENT_MOVE = 0,   /**< the cursor moved to x, y */
    CUGL_APP_EVENT_BUTTON = 1, /**< a mouse button (code) went down or up */
    CUGL_APP_EVENT_SCROLL = 2, /**< the wheel turned y steps */
    CUGL_APP_EVENT_KEY = 3,    /**< a key (code) went down or up */
    CUGL_APP_EVENT_RESIZE = 4, /**< the framebuffer became width x height */
    CUGL_APP_EVENT_CLOSE = 5,  /**< the user asks to quit */
} cugl_app_event_type;

/** Limits of the text format and of a context's queue of pushed events. */
enum {
    CUGL_APP_EVENT_MAX_LINE = 256,      /**< bytes of a line, its end excluded */
    CUGL_APP_EVENT_MAX_COUNT = 1000000, /**< events of a file */
    CUGL_APP_EVENT_MAX_LINES = 4000000, /**< lines of a file, comments and blank ones too */
    CUGL_APP_EVENT_MAX_FRAME = 1000000000, /**< the largest frame an event names */
    CUGL_APP_EVENT_MAX_PENDING = 4096, /**< pushed events awaiting a present */
    CUGL_APP_EVENT_MAX_PER_FRAME = 65536, /**< events one frame keeps (cugl_app_context_events) */
};

/** One input event, as a value: a line of the text format above. */
typedef struct cugl_app_event {
    long frame;               /**< the frame whose update first sees it */
    cugl_app_event_type type; /**< what happened; it says which fields below count */
    double x,                 /**< move: the cursor, pixels from the left */
        y;                    /**< move: the cursor, pixels from the top; scroll: the steps */
    int code;                 /**< button: 0 left, 1 right, 2 middle; key: CUGL_APP_KEY_* */
    bool down;                /**< button, key: pressed, else released */
    int width,                /**< resize: the framebuffer's new width in pixels */
        height;               /**< resize: the framebuffer's new height in pixels */
} cugl_app_event;

/**
 * One line of text as an event.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a line longer than
 *   CUGL_APP_EVENT_MAX_LINE; not an event: the message quotes the line and
 *   says what is wrong).
 * @thread_safety Any thread.
 * @param[out] out the event.
 * @param line the line, NUL-terminated; a newline at its end is allowed but counts towards
 *   CUGL_APP_EVENT_MAX_LINE. A blank or '#' line is no event here.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_event_parse(cugl_app_event *out, const char *line);

/**
 * An event as one line of text (no newline) into out[size], as snprintf
 * does: returns the length it needs, or -1 for an event that is not valid.
 * cugl_app_event_parse reads the line back to the same event.
 * @thread_safety Any thread.
 * @param[out] out where the line goes, NUL-terminated when size is not 0; NULL only with
 *   size 0.
 * @param size the bytes of out.
 * @param ev the event.
 * @return the line's length in bytes, its NUL excluded, however small size is; -1 for a
 *   NULL or invalid event (out untouched).
 */
CUGL_API int cugl_app_event_format(char *out, size_t size, const cugl_app_event *ev);

/**
 * Every event of a file (comments skipped), in order; frames never
 * decrease. Free *out with cugl_app_events_free.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; the file cannot be read; a
 *   line is not an event, goes back in time, is too long or holds a NUL
 *   byte: "<path>:<line>: ..."; more than CUGL_APP_EVENT_MAX_COUNT events
 *   or CUGL_APP_EVENT_MAX_LINES lines: an endless file such as /dev/zero
 *   ends there), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread.
 * @param[out] out the events, a new array; NULL for a file without events, and on failure.
 * @param[out] count the number of events; 0 on failure.
 * @param path the file to read.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_events_read(cugl_app_event **out, size_t *count,
                                          const char *path);

/**
 * Free what cugl_app_events_read returned; NULL: no-op. @thread_safety Any thread.
 * @param events the array, or NULL.
 */
CUGL_API void cugl_app_events_free(cugl_app_event *events);

/**
 * Queue an event for `ctx`: the next present applies it as if the window
 * had reported it (a resize of a window asks the window for that size).
 * Of the resizes queued for one present, the last alone is applied, and a
 * headless context's framebuffer is rebuilt only for a size it does not
 * have. For input from elsewhere, such as a remote viewer.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; an event that is not valid:
 *   a type, button or key out of range, a coordinate, scroll or size out of
 *   the text format's ranges), CUGL_ERROR_INVALID_STATE (already
 *   CUGL_APP_EVENT_MAX_PENDING events wait), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread, while another uses the context.
 * @param ctx the context.
 * @param ev the event, copied. Its frame is not used (the next present's frame is), but must
 *   be within the text format's range.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_push_event(cugl_app_context *ctx,
                                                 const cugl_app_event *ev);

/**
 * Replay `events` (copied; frames never decreasing): each present applies
 * those whose frame has come, so that frame N's input holds the events of
 * frames up to N, whatever the clock says. Events due already (frame 0 on
 * a new context) are applied now. Replaces an earlier replay; the window's
 * own input still arrives too.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL with a count; an event not
 *   valid or out of order: "event <i>: ..."), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the context.
 * @param ctx the context.
 * @param events `count` events, copied; NULL when count is 0.
 * @param count the number of events; 0 ends an earlier replay.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_replay(cugl_app_context *ctx,
                                             const cugl_app_event *events, size_t count);

/** Whether every replayed event has been applied (true without a replay).
 * @thread_safety The thread that uses the context.
 * @param ctx the context, or NULL.
 * @return true when every replayed event has been applied, without a replay, and for NULL;
 *   false while some are still to come. */
CUGL_API bool cugl_app_context_replay_done(const cugl_app_context *ctx);

/**
 * Write every event the context applies from now on to the file `path`,
 * one line each with the frame that first saw it: a file
 * cugl_app_events_read and a replay take back. The lines go to a temporary
 * file beside `path`, which replaces the file at `path` when the recording
 * stops (as cugl_app_write_file does): a recording whose writing failed
 * leaves what was at `path` untouched and no temporary file. NULL stops;
 * destroying the context stops too (and cannot report a failure: stop
 * first where that matters).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL ctx; the file cannot be made;
 *   stopping, when the file cannot be put in place), CUGL_ERROR_INVALID_STATE
 *   (stopping, when writing a line had failed: a full disk, say),
 *   CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the context.
 * @param ctx the context.
 * @param path the file to write, or NULL to stop recording.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_context_record(cugl_app_context *ctx, const char *path);

/** Presents so far: the frame whose input the context holds now.
 * @thread_safety The thread that uses the context.
 * @param ctx the context, or NULL.
 * @return the number of presents so far; 0 for NULL. */
CUGL_API long cugl_app_context_frame(const cugl_app_context *ctx);

/**
 * The events this frame's input took, in the order they came: a window's,
 * replayed and pushed alike, every move, button press and release, wheel
 * step, key, resize and close, each with `frame` this frame's number. A
 * press and release between two presents are both here, though the
 * state (cugl_app_context_input) shows neither. The events of a frame are
 * those applied since the previous present; past CUGL_APP_EVENT_MAX_PER_FRAME
 * of them, the later ones are counted in `lost` and not kept.
 * @errors none.
 * @thread_safety The thread that uses the context.
 * @param ctx the context, or NULL.
 * @param[out] count how many (0 for NULL), or NULL.
 * @param[out] lost how many this frame did not keep, or NULL.
 * @return the events, held by the context until its next present; NULL when there are none.
 */
CUGL_API const cugl_app_event *cugl_app_context_events(const cugl_app_context *ctx,
                                                       size_t *count, size_t *lost);

CUGL_END_DECLS

#endif /* CUGL_APP_INPUT_H */
