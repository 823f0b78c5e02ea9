/**
 * @file cugl/app.h
 * libcugl-app: everything GL that a cugl program needs, one header a
 * subject, all included here.
 *
 *   cugl/app_config.h    what this build has (CUGL_APP_HAS_UI, _SERVE)
 *   cugl/app_context.h   a GL 4.5 context: a GLFW window or headless EGL
 *   cugl/app_input.h     input as state and as events, key codes, replay
 *   cugl/app_gl.h        shader programs, the blit, GL error checks
 *   cugl/app_image.h     readback, PNG files, files written whole
 *   cugl/app_camera.h    the orbit camera
 *   cugl/app_timer.h     per-phase frame timing, CPU and GPU
 *   cugl/app_interop.h   which interop path works here
 *   cugl/app_target.h    what CUDA writes and GL shows, on any path
 *   cugl/app_draw.h      drawers of it: meshes, colour maps
 *   cugl/app_shared.h    map-free shared memory (the GL half)
 *   cugl/app_ui.h        the panel (Dear ImGui), where built
 *   cugl/app_serve.h     the frames served to web browsers, where built
 *   cugl/app_record.h    the frames kept as a video file, where built
 *
 * libcugl itself never calls GL; this library does, through a loader of
 * its own that it keeps private: a program uses whatever GL loader it
 * likes, loaded from cugl_app_gl_proc (GLAD: gladLoadGL(cugl_app_gl_proc)).
 * No GL header is included here; GL object names and enums are uint32_t.
 *
 * Errors are cugl's: functions return cugl_status and leave a message in
 * cugl_last_error() (shader compile and link logs included).
 * Threads: a context is used by the thread that made it current.
 */
#ifndef CUGL_APP_H
#define CUGL_APP_H

#include "cugl/app_config.h"
#include "cugl/app_context.h"
#include "cugl/app_input.h"
#include "cugl/app_gl.h"
#include "cugl/app_image.h"
#include "cugl/app_camera.h"
#include "cugl/app_timer.h"
#include "cugl/app_interop.h"
#include "cugl/app_shared.h"
#include "cugl/app_target.h"
#include "cugl/app_draw.h"
#if CUGL_APP_HAS_UI
#include "cugl/app_ui.h"
#endif
#if CUGL_APP_HAS_SERVE
#include "cugl/app_serve.h"
#endif
#if CUGL_APP_HAS_RECORD
#include "cugl/app_record.h"
#endif

#endif /* CUGL_APP_H */
