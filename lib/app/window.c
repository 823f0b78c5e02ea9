/*
 * window.c - contexts in a GLFW window: creation, input gathered by the
 * callbacks and published once a frame, the frame rate in the title.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

/* GLFW is initialised with the first window and terminated with the last. */
static int window_count;

static cugl_app_context *owner(GLFWwindow *window)
{
    return glfwGetWindowUserPointer(window);
}

/* Each callback hands its event to the one input path (input.c). */
static void on_framebuffer_size(GLFWwindow *window, int width, int height)
{
    /* Minimised windows report 0 x 0: no size to draw at; keep the last. */
    if (width > 0 && height > 0)
        cugl__app_input_apply(owner(window), &(cugl_app_event){.type = CUGL_APP_EVENT_RESIZE,
                                                               .width = width,
                                                               .height = height});
}

static void on_cursor(GLFWwindow *window, double x, double y)
{
    cugl__app_input_apply(owner(window),
                          &(cugl_app_event){.type = CUGL_APP_EVENT_MOVE, .x = x, .y = y});
}

static void on_cursor_enter(GLFWwindow *window, int entered)
{
    if (entered)
        owner(window)->cursor_entered = true;
}

static void on_scroll(GLFWwindow *window, double dx, double dy)
{
    (void)dx;
    cugl__app_input_apply(owner(window), &(cugl_app_event){.type = CUGL_APP_EVENT_SCROLL, .y = dy});
}

static void on_button(GLFWwindow *window, int button, int action, int mods)
{
    (void)mods;
    if (button > GLFW_MOUSE_BUTTON_MIDDLE)
        return;
    /* GLFW numbers them left 0, right 1, middle 2, as events do. */
    cugl__app_input_apply(owner(window), &(cugl_app_event){.type = CUGL_APP_EVENT_BUTTON,
                                                           .code = button,
                                                           .down = action == GLFW_PRESS});
}

static void on_key(GLFWwindow *window, int key, int scancode, int action, int mods)
{
    (void)scancode;
    (void)mods;
    /* A repeat changes nothing held; an unknown key (-1) is no event. */
    if (action == GLFW_REPEAT || key < GLFW_KEY_SPACE || key > GLFW_KEY_LAST)
        return;
    cugl__app_input_apply(owner(window), &(cugl_app_event){.type = CUGL_APP_EVENT_KEY,
                                                           .code = key,
                                                           .down = action == GLFW_PRESS});
}

static const char *glfw_why(void)
{
    const char *why = NULL;
    glfwGetError(&why);
    return why ? why : "no reason given";
}

cugl_status cugl__app_window_create(cugl_app_context *ctx, const cugl_app_context_desc *desc,
                                    bool report, const char *who)
{
    ctx->platform = "glfw";
    if (window_count == 0 && !glfwInit())
        return report ? cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                                   "glfwInit failed: %s; use --headless", glfw_why())
                      : CUGL_ERROR_NOT_SUPPORTED;
    glfwDefaultWindowHints();
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 5);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_OPENGL_DEBUG_CONTEXT, desc->debug ? GLFW_TRUE : GLFW_FALSE);
    ctx->window = glfwCreateWindow(desc->width, desc->height, desc->title, NULL, NULL);
    if (!ctx->window) {
        const char *why = glfw_why();
        cugl_status st = report ? cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                                             "no %d x %d window with GL 4.5 core: %s",
                                             desc->width, desc->height, why)
                                : CUGL_ERROR_NOT_SUPPORTED;
        if (window_count == 0)
            glfwTerminate();
        return st;
    }
    window_count++;
    ctx->title = strdup(desc->title);
    if (!ctx->title)
        return report ? cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for the title")
                      : CUGL_ERROR_OUT_OF_MEMORY;

    glfwSetWindowUserPointer(ctx->window, ctx);
    glfwSetFramebufferSizeCallback(ctx->window, on_framebuffer_size);
    glfwSetCursorPosCallback(ctx->window, on_cursor);
    glfwSetCursorEnterCallback(ctx->window, on_cursor_enter);
    glfwSetScrollCallback(ctx->window, on_scroll);
    glfwSetMouseButtonCallback(ctx->window, on_button);
    glfwSetKeyCallback(ctx->window, on_key);
    glfwGetFramebufferSize(ctx->window, &ctx->width, &ctx->height);
    glfwGetCursorPos(ctx->window, &ctx->pending.x, &ctx->pending.y);
    ctx->input = ctx->pending;
    ctx->fps_since = glfwGetTime();

    glfwMakeContextCurrent(ctx->window);
    glfwSwapInterval(desc->no_vsync ? 0 : 1);
    cugl_status st = cugl__app_gl_init(ctx, gladLoadGL(glfwGetProcAddress), desc->debug, who);
    if (st == CUGL_OK)
        glViewport(0, 0, ctx->width, ctx->height);
    return st;
}

void cugl__app_window_destroy(cugl_app_context *ctx)
{
    if (ctx->window) {
        glfwDestroyWindow(ctx->window);
        ctx->window = NULL;
        if (--window_count == 0)
            glfwTerminate();
    }
    free(ctx->title);
    ctx->title = NULL;
}

cugl_status cugl__app_window_present(cugl_app_context *ctx)
{
    glfwSwapBuffers(ctx->window);
    glfwPollEvents();
    cugl_status st = cugl__app_input_present(ctx);

    ctx->fps_frames++;
    double now = glfwGetTime(), span = now - ctx->fps_since;
    if (span >= 0.5) {
        char title[512];
        snprintf(title, sizeof title, "%s - %.0f fps", ctx->title, ctx->fps_frames / span);
        glfwSetWindowTitle(ctx->window, title);
        ctx->fps_since = now;
        ctx->fps_frames = 0;
    }
    return st;
}
