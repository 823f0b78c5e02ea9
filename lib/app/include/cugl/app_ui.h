/**
 * @file cugl/app_ui.h
 * A panel of controls over a context's frame: sliders,
 * checkboxes, combos, text and line plots in one window at the top left.
 *
 * Dear ImGui draws it (built only where meson found Debian's libimgui-dev;
 * CUGL_APP_HAS_UI is then 1 for programs that use libcugl-app). Its input is
 * the context's own (cugl_app_context_input, cugl_app_key_down), so replayed
 * and pushed events drive it exactly as a mouse does, headless too. No
 * settings file is read or written, the font is the built-in one, and what
 * it draws depends only on the input and the `dt` of each frame.
 *
 * A frame: cugl_app_ui_begin, the widgets, cugl_app_ui_end (before the
 * context's present). Each widget returns true when the user changed its
 * value this frame.
 */
#ifndef CUGL_APP_UI_H
#define CUGL_APP_UI_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/** A panel of controls over a context's frame (cugl_app_ui_create). Opaque. */
typedef struct cugl_app_ui cugl_app_ui;

/**
 * Make a panel that draws into `ctx` and reads its input. Its GL objects
 * (a program, buffers, the font texture) are made now, in `ctx`, which must
 * be current.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL), CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_GL (Dear ImGui's OpenGL 3 renderer did not start: the message
 *   says what it found missing).
 * @thread_safety The thread whose current context is `ctx`; one thread at a
 *   time for all panels (Dear ImGui keeps its current context process-wide).
 * @pointer_lifetime `ctx` must outlive the panel.
 * @param[out] out the panel; NULL on failure.
 * @param ctx the context it draws into and takes its input from.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_ui_create(cugl_app_ui **out, cugl_app_context *ctx);

/**
 * Free the panel and its GL objects. Its context must be current. NULL: no-op.
 * @thread_safety As cugl_app_ui_create.
 * @param ui the panel, or NULL.
 */
CUGL_API void cugl_app_ui_destroy(cugl_app_ui *ui);

/**
 * Start a frame: take the context's input of this frame and its size, and
 * open the panel's window at the top left, titled `title` (NULL or "": "cugl"),
 * sized to fit its widgets. `dt`: seconds since the previous frame; not
 * positive: 1/60. A frame still open is ended first, drawing nothing. A
 * new panel shows from its second frame (the first measures the widgets).
 * @errors none.
 * @thread_safety As cugl_app_ui_create.
 * @pointer_lifetime `title` is read during the call.
 * @param ui the panel; NULL: no-op.
 * @param dt seconds since the previous frame.
 * @param title the panel window's title, or NULL.
 */
CUGL_API void cugl_app_ui_begin(cugl_app_ui *ui, float dt, const char *title);

/**
 * A slider from min to max; `label` names it and must be unique in the panel.
 * These widgets do nothing and return false outside begin .. end. A widget
 * the panel cannot draw (an empty or NULL label, a NULL value, bounds that
 * are not finite or lie past half the type's range, a value that is not a
 * number) is refused: it is left out, returns false, leaves a message in
 * cugl_last_error() naming the widget's function, and cugl_app_ui_end fails
 * that frame with the first such message; the panel goes on.
 * @errors refusals as above (CUGL_ERROR_INVALID_ARGUMENT, reported by
 *   cugl_app_ui_end). @thread_safety As cugl_app_ui_create.
 * @pointer_lifetime `label` is read during the call, `value` read and written.
 * @param ui the panel.
 * @param label the slider's label.
 * @param[in,out] value the value shown, set by a drag, within min .. max.
 * @param min the smallest value, within +-FLT_MAX/2.
 * @param max the largest value, within +-FLT_MAX/2.
 * @return true when the user changed `value` this frame; false otherwise, and for NULL.
 */
CUGL_API bool cugl_app_ui_slider_float(cugl_app_ui *ui, const char *label, float *value,
                                       float min, float max);
/**
 * An integer slider from min to max.
 * @errors refusals as for cugl_app_ui_slider_float. @thread_safety As cugl_app_ui_create.
 * @param ui the panel.
 * @param label the slider's label, unique in the panel.
 * @param[in,out] value the value shown, set by a drag, within min .. max.
 * @param min the smallest value, within INT_MIN/2 .. INT_MAX/2.
 * @param max the largest value, within INT_MIN/2 .. INT_MAX/2.
 * @return true when the user changed `value` this frame; false otherwise, and for NULL.
 */
CUGL_API bool cugl_app_ui_slider_int(cugl_app_ui *ui, const char *label, int *value, int min,
                                     int max);
/**
 * A checkbox; a click flips `value`.
 * @errors refusals as for cugl_app_ui_slider_float. @thread_safety As cugl_app_ui_create.
 * @param ui the panel.
 * @param label the checkbox's label, unique in the panel.
 * @param[in,out] value the state shown, flipped by a click.
 * @return true when the user flipped `value` this frame; false otherwise, and for NULL.
 */
CUGL_API bool cugl_app_ui_checkbox(cugl_app_ui *ui, const char *label, bool *value);
/**
 * A drop-down list of `count` items; `current` is the chosen one's index.
 * @errors refusals as for cugl_app_ui_slider_float, and a NULL item.
 * @thread_safety As cugl_app_ui_create.
 * @pointer_lifetime `items` are read during the call.
 * @param ui the panel.
 * @param label the list's label, unique in the panel.
 * @param[in,out] current the chosen item's index, set by a choice.
 * @param items `count` item texts.
 * @param count the number of items; not positive: nothing is drawn.
 * @return true when the user chose an item this frame; false otherwise, and for NULL.
 */
CUGL_API bool cugl_app_ui_combo(cugl_app_ui *ui, const char *label, int *current,
                                const char *const *items, int count);

/**
 * A line of text, printf-formatted. @errors none. @thread_safety As cugl_app_ui_create.
 * @param ui the panel.
 * @param fmt the printf format.
 * @param ... the values it formats.
 */
CUGL_API void cugl_app_ui_text(cugl_app_ui *ui, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/**
 * A line plot of `count` values (oldest first), from 0 at the bottom to
 * `scale_max` at the top (not positive: the largest value), such as the
 * recent frames' phase times of cugl_app_timer_last.
 * @errors refusals as for cugl_app_ui_slider_float, and a negative count.
 * @thread_safety As cugl_app_ui_create.
 * @pointer_lifetime `values` are read during the call.
 * @param ui the panel.
 * @param label the plot's label, unique in the panel.
 * @param values `count` values, or NULL for an empty plot.
 * @param count the number of values.
 * @param scale_max the value at the top of the plot.
 */
CUGL_API void cugl_app_ui_plot(cugl_app_ui *ui, const char *label, const float *values,
                               int count, float scale_max);

/**
 * End the frame and draw the panel into the framebuffer bound now, over the
 * context's whole size. The GL state a program relies on (program, vertex
 * array, buffers, texture and sampler of unit 0, active texture unit,
 * blending, culling, depth, stencil and scissor tests, viewport, scissor
 * box, polygon mode) is as it was before.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a widget of this frame was
 *   refused: the message quotes the first refusal; the rest was drawn),
 *   CUGL_ERROR_INVALID_STATE (no frame begun), CUGL_ERROR_GL.
 * @thread_safety As cugl_app_ui_create.
 * @param ui the panel.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_ui_end(cugl_app_ui *ui);

/**
 * Whether the panel takes the mouse this frame (the cursor is over it, or a
 * drag began on it): a program should then not turn its camera. Valid from
 * cugl_app_ui_begin on; false for NULL.
 * @errors none. @thread_safety As cugl_app_ui_create.
 * @param ui the panel, or NULL.
 * @return true when the panel takes the mouse this frame; false otherwise, and for NULL.
 */
CUGL_API bool cugl_app_ui_wants_mouse(const cugl_app_ui *ui);

CUGL_END_DECLS

#endif /* CUGL_APP_UI_H */
