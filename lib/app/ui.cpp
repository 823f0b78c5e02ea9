/*
 * ui.cpp - the panel of cugl/app_ui.h: Dear ImGui 1.86 behind a C interface.
 *
 * Input comes from the context's input of the frame, written into ImGui's
 * io fields at each begin, never from GLFW's callbacks: a replay, a remote
 * viewer's pushed events and the mouse all reach the panel the same way,
 * headless too. Dear ImGui's OpenGL 3 renderer draws it and saves and
 * restores the GL state it touches.
 *
 * Each panel owns an ImGui context (its io, style and font atlas). ImGui's
 * current context is one process-wide pointer: every call makes the
 * panel's current and puts back the one that was, so that a program with
 * its own ImGui keeps it.
 */
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <new>

#include "cugl/app.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h> /* the key codes of cugl_app_key_down */

#include <imgui.h>
#include <backends/imgui_impl_opengl3.h>

/* The error idiom of every library of cugl, in C++. */
#include "check.h"

struct cugl_app_ui {
    cugl_app_context *ctx;
    ImGuiContext *imgui;
    bool in_frame;
    bool wants_mouse;
    /* The frame's first refused widget: cugl_app_ui_end reports it. */
    char refusal[512];
};

namespace {

/* The panel's ImGui context current for a call, the previous one after. */
class Current {
  public:
    explicit Current(const cugl_app_ui *ui) : previous_(ImGui::GetCurrentContext())
    {
        ImGui::SetCurrentContext(ui->imgui);
    }
    ~Current() { ImGui::SetCurrentContext(previous_); }
    Current(const Current &) = delete;
    Current &operator=(const Current &) = delete;

    /* The previous context, unless it is `gone` (destroyed meanwhile). */
    void forget(const ImGuiContext *gone)
    {
        if (previous_ == gone)
            previous_ = nullptr;
    }

  private:
    ImGuiContext *previous_;
};

/* ImGui 1.86 names the keys it acts on by indices into io.KeysDown; ours
 * are GLFW's codes, as cugl_app_key_down takes them. */
const struct {
    ImGuiKey imgui;
    int glfw;
} key_map[] = {
    {ImGuiKey_Tab, GLFW_KEY_TAB},
    {ImGuiKey_LeftArrow, GLFW_KEY_LEFT},
    {ImGuiKey_RightArrow, GLFW_KEY_RIGHT},
    {ImGuiKey_UpArrow, GLFW_KEY_UP},
    {ImGuiKey_DownArrow, GLFW_KEY_DOWN},
    {ImGuiKey_PageUp, GLFW_KEY_PAGE_UP},
    {ImGuiKey_PageDown, GLFW_KEY_PAGE_DOWN},
    {ImGuiKey_Home, GLFW_KEY_HOME},
    {ImGuiKey_End, GLFW_KEY_END},
    {ImGuiKey_Insert, GLFW_KEY_INSERT},
    {ImGuiKey_Delete, GLFW_KEY_DELETE},
    {ImGuiKey_Backspace, GLFW_KEY_BACKSPACE},
    {ImGuiKey_Space, GLFW_KEY_SPACE},
    {ImGuiKey_Enter, GLFW_KEY_ENTER},
    {ImGuiKey_Escape, GLFW_KEY_ESCAPE},
    {ImGuiKey_KeyPadEnter, GLFW_KEY_KP_ENTER},
    {ImGuiKey_A, GLFW_KEY_A},
    {ImGuiKey_C, GLFW_KEY_C},
    {ImGuiKey_V, GLFW_KEY_V},
    {ImGuiKey_X, GLFW_KEY_X},
    {ImGuiKey_Y, GLFW_KEY_Y},
    {ImGuiKey_Z, GLFW_KEY_Z},
};
static_assert(sizeof key_map / sizeof key_map[0] == ImGuiKey_COUNT, "every ImGuiKey mapped");
static_assert(GLFW_KEY_LAST < sizeof(ImGuiIO::KeysDown) / sizeof(bool),
              "GLFW's codes fit KeysDown");

/* The panel's values are typed in by dragging only: there is no text input
 * (the context's input has keys, not characters). */
const ImGuiSliderFlags slider_flags = ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_NoInput;

/* A widget the panel refuses (Dear ImGui would abort on it): reported now,
 * as the thread's last error, and again by cugl_app_ui_end, which fails
 * the frame; the widget is not drawn and returns false. */
bool refuse(cugl_app_ui *ui, const char *who, const char *fmt, ...)
{
    char text[400];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s", text);
    if (!ui->refusal[0])
        snprintf(ui->refusal, sizeof ui->refusal, "%s: %s", who, text);
    return false;
}

/* Whether a widget may be drawn: a frame is open and its label names it
 * (Dear ImGui takes an empty label for the window's own ID). */
bool widget_ok(cugl_app_ui *ui, const char *who, const char *label)
{
    if (!ui || !ui->in_frame)
        return false;
    if (!label || !label[0])
        return refuse(ui, who, "%s label: every widget needs one", label ? "an empty" : "a NULL");
    return true;
}

/* End an open frame without drawing it. */
void drop_frame(cugl_app_ui *ui)
{
    if (!ui->in_frame)
        return;
    ImGui::End();
    ImGui::EndFrame();
    ui->in_frame = false;
}

/* The context's input of this frame into ImGui's io. */
void feed_input(ImGuiIO &io, const cugl_app_context *ctx, float dt)
{
    int width = 0, height = 0;
    cugl_app_context_size(ctx, &width, &height);
    io.DisplaySize = ImVec2((float)width, (float)height);
    io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
    io.DeltaTime = std::isfinite(dt) && dt > 0.0f ? dt : 1.0f / 60.0f;

    const cugl_app_input *in = cugl_app_context_input(ctx);
    io.MousePos = ImVec2((float)in->x, (float)in->y);
    io.MouseDown[0] = in->left;
    io.MouseDown[1] = in->right;
    io.MouseDown[2] = in->middle;
    io.MouseWheel = (float)in->scroll;
    io.MouseWheelH = 0.0f;

    for (int k = 0; k <= GLFW_KEY_LAST; k++)
        io.KeysDown[k] = cugl_app_key_down(ctx, k);
    io.KeyShift = in->shift;
    io.KeyCtrl = in->ctrl;
    io.KeyAlt = io.KeysDown[GLFW_KEY_LEFT_ALT] || io.KeysDown[GLFW_KEY_RIGHT_ALT];
    io.KeySuper = io.KeysDown[GLFW_KEY_LEFT_SUPER] || io.KeysDown[GLFW_KEY_RIGHT_SUPER];
}

} // namespace

CUGL_API cugl_status cugl_app_ui_create(cugl_app_ui **out, cugl_app_context *ctx)
{
    if (!out)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "out is NULL");
    *out = nullptr;
    if (!ctx)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "ctx is NULL");
    cugl_app_ui *ui = new (std::nothrow) cugl_app_ui{};
    if (!ui)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for a panel");
    ui->ctx = ctx;

    IMGUI_CHECKVERSION();
    ImGuiContext *previous = ImGui::GetCurrentContext();
    ui->imgui = ImGui::CreateContext();
    ImGui::SetCurrentContext(ui->imgui);
    ImGuiIO &io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.LogFilename = nullptr;
    io.BackendPlatformName = "cugl_app_ui";
    for (const auto &k : key_map)
        io.KeyMap[k.imgui] = k.glfw;

    /* The renderer's loader takes GL's entry points from libGL.so.1
     * (glXGetProcAddressARB); under GLVND they dispatch to whatever context
     * is current, EGL's included. Its objects are made now, so that a
     * failure shows here rather than at the first frame. */
    cugl_app_drain_gl_errors();
    cugl_status st = CUGL_OK;
    if (!ImGui_ImplOpenGL3_Init("#version 450")) {
        st = cugl__fail(CUGL_ERROR_GL, __func__,
                        "Dear ImGui's OpenGL 3 renderer did not start: its loader needs libGL.so.1 "
                        "with glXGetProcAddressARB, and GL 3.0 or newer in the current context");
    } else if (!ImGui_ImplOpenGL3_CreateDeviceObjects() ||
               (st = cugl_app_check_gl(__func__, "making Dear ImGui's GL objects")) != CUGL_OK) {
        if (st == CUGL_OK)
            st = cugl__fail(CUGL_ERROR_GL, __func__,
                            "Dear ImGui's OpenGL 3 renderer could not make its "
                            "program, buffers or font texture");
        ImGui_ImplOpenGL3_Shutdown();
    }
    if (st != CUGL_OK) {
        ImGui::DestroyContext(ui->imgui);
        ImGui::SetCurrentContext(previous);
        delete ui;
        return st;
    }
    ImGui::SetCurrentContext(previous);
    *out = ui;
    return CUGL_OK;
}

CUGL_API void cugl_app_ui_destroy(cugl_app_ui *ui)
{
    if (!ui)
        return;
    {
        Current current(ui);
        drop_frame(ui);
        ImGui_ImplOpenGL3_Shutdown();
        ImGui::DestroyContext(ui->imgui);
        current.forget(ui->imgui);
    }
    delete ui;
}

CUGL_API void cugl_app_ui_begin(cugl_app_ui *ui, float dt, const char *title)
{
    if (!ui)
        return;
    Current current(ui);
    drop_frame(ui);
    ui->refusal[0] = '\0';
    ImGuiIO &io = ImGui::GetIO();
    feed_input(io, ui->ctx, dt);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui::NewFrame();
    ui->wants_mouse = io.WantCaptureMouse;

    /* Always at the top left and sized by its widgets: nothing of the
     * layout depends on what an earlier run did. */
    ImGui::SetNextWindowPos(ImVec2(0.0f, 0.0f), ImGuiCond_Always);
    ImGui::Begin(title && title[0] ? title : "cugl", nullptr,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoSavedSettings);
    ui->in_frame = true;
}

CUGL_API bool cugl_app_ui_slider_float(cugl_app_ui *ui, const char *label, float *value,
                                       float min, float max)
{
    if (!widget_ok(ui, __func__, label))
        return false;
    /* Dear ImGui's sliders take bounds within half float's range. */
    if (!(std::fabs(min) <= FLT_MAX / 2 && std::fabs(max) <= FLT_MAX / 2))
        return refuse(ui, __func__, "\"%s\": bounds %g .. %g are not finite numbers within "
                                    "+-FLT_MAX/2", label, (double)min, (double)max);
    if (!value)
        return refuse(ui, __func__, "\"%s\": value is NULL", label);
    if (!std::isfinite(*value))
        return refuse(ui, __func__, "\"%s\": the value is %g, not a number to show", label,
                      (double)*value);
    Current current(ui);
    return ImGui::SliderFloat(label, value, min, max, "%.3f", slider_flags);
}

CUGL_API bool cugl_app_ui_slider_int(cugl_app_ui *ui, const char *label, int *value, int min,
                                     int max)
{
    if (!widget_ok(ui, __func__, label))
        return false;
    /* Dear ImGui's sliders take bounds within half int's range. */
    if (min < INT_MIN / 2 || max > INT_MAX / 2 || max < INT_MIN / 2 || min > INT_MAX / 2)
        return refuse(ui, __func__, "\"%s\": bounds %d .. %d are not within %d .. %d", label,
                      min, max, INT_MIN / 2, INT_MAX / 2);
    if (!value)
        return refuse(ui, __func__, "\"%s\": value is NULL", label);
    Current current(ui);
    return ImGui::SliderInt(label, value, min, max, "%d", slider_flags);
}

CUGL_API bool cugl_app_ui_checkbox(cugl_app_ui *ui, const char *label, bool *value)
{
    if (!widget_ok(ui, __func__, label))
        return false;
    if (!value)
        return refuse(ui, __func__, "\"%s\": value is NULL", label);
    Current current(ui);
    return ImGui::Checkbox(label, value);
}

CUGL_API bool cugl_app_ui_combo(cugl_app_ui *ui, const char *label, int *current_item,
                                const char *const *items, int count)
{
    if (!widget_ok(ui, __func__, label))
        return false;
    if (!current_item || !items)
        return refuse(ui, __func__, "\"%s\": %s is NULL", label,
                      !current_item ? "current" : "items");
    if (count <= 0)
        return false; /* nothing to choose from: nothing drawn */
    for (int i = 0; i < count; i++)
        if (!items[i])
            return refuse(ui, __func__, "\"%s\": item %d of %d is NULL", label, i, count);
    Current current(ui);
    return ImGui::Combo(label, current_item, items, count);
}

CUGL_API void cugl_app_ui_text(cugl_app_ui *ui, const char *fmt, ...)
{
    if (!ui || !ui->in_frame || !fmt)
        return;
    Current current(ui);
    va_list args;
    va_start(args, fmt);
    ImGui::TextV(fmt, args);
    va_end(args);
}

CUGL_API void cugl_app_ui_plot(cugl_app_ui *ui, const char *label, const float *values,
                               int count, float scale_max)
{
    if (!widget_ok(ui, __func__, label))
        return;
    if (count < 0) {
        refuse(ui, __func__, "\"%s\": count %d is negative", label, count);
        return;
    }
    Current current(ui);
    /* 0 at the bottom keeps a flat history from filling the plot with noise. */
    ImGui::PlotLines(label, values, values ? count : 0, 0, nullptr, 0.0f,
                     scale_max > 0.0f && scale_max <= FLT_MAX ? scale_max : FLT_MAX,
                     ImVec2(0.0f, 4.0f * ImGui::GetFrameHeight()));
}

CUGL_API cugl_status cugl_app_ui_end(cugl_app_ui *ui)
{
    if (!ui)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "ui is NULL");
    if (!ui->in_frame)
        return cugl__fail(CUGL_ERROR_INVALID_STATE, __func__,
                          "no frame has begun (call cugl_app_ui_begin first)");
    Current current(ui);
    ImGui::End();
    ImGui::Render();
    ui->in_frame = false;
    cugl_app_drain_gl_errors();
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    cugl_status st = cugl_app_check_gl(__func__, "drawing the panel");
    if (st == CUGL_OK && ui->refusal[0])
        st = cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                        "a widget was refused and left out: %s",
                        ui->refusal);
    return st;
}

CUGL_API bool cugl_app_ui_wants_mouse(const cugl_app_ui *ui)
{
    return ui && ui->wants_mouse;
}
