/**
 * @file cugl/app_camera.h
 * The orbit camera: input in, view and projection matrices out.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_CAMERA_H
#define CUGL_APP_CAMERA_H

#include "cugl/app_input.h"

CUGL_BEGIN_DECLS

/* ---- Orbit camera (cglm inside; plain floats outside) ---------------------- */

/**
 * An orbit camera: the eye sits `distance` from `target`, turned `yaw` about +y (from +z
 * towards +x) and raised `pitch` above the horizontal, and looks at the target with +y up.
 */
typedef struct cugl_app_camera {
    float target[3];  /**< the point looked at, world coordinates */
    float distance;   /**< from the target */
    float yaw,        /**< radians; cugl_app_camera_update keeps it within -pi .. pi */
        pitch;        /**< radians; pitch kept within +-89 degrees */
    float fov_y;      /**< vertical field of view, radians */
    float z_near,     /**< the near clipping plane's distance from the eye */
        z_far;        /**< the far clipping plane's distance from the eye */
} cugl_app_camera;

/**
 * Looking at the origin from distance 3, yaw 0.6, pitch 0.5, 45 degrees.
 * @thread_safety Any thread.
 * @param[out] cam the camera; NULL: no-op.
 */
CUGL_API void cugl_app_camera_init(cugl_app_camera *cam);
/**
 * Left drag orbits, right drag pans the target, wheel zooms, arrow keys
 * and W/A/S/D orbit, R resets (held, or pressed and released between two
 * presents), from the context's input of this frame (a window's, replayed
 * or pushed: headless contexts too). The camera stays a view whatever the
 * input: yaw within -pi .. pi, pitch within +-89 degrees, distance within
 * 1e-4 .. 1e30, a pan that would leave float's range is not taken.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; dt_seconds not finite; a
 *   camera whose numbers make no view: not finite, distance not positive,
 *   fov_y outside 0 .. pi, not 0 < z_near < z_far): the camera is unchanged.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[in,out] cam the camera.
 * @param ctx the context whose input of this frame moves it.
 * @param dt_seconds seconds since the previous update: keys orbit 1.5 radians a second (not
 *   positive: keys do not orbit).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_camera_update(cugl_app_camera *cam, const cugl_app_context *ctx,
                                            float dt_seconds);
/**
 * Column-major 4x4 view and projection matrices, ready for glUniformMatrix4fv.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL cam; aspect not finite; a
 *   camera whose numbers make no view, as for cugl_app_camera_update):
 *   nothing is written.
 * @thread_safety Any thread.
 * @param[out] view the view matrix, or NULL.
 * @param[out] proj the projection matrix, or NULL.
 * @param cam the camera.
 * @param aspect the viewport's width over its height; not positive: 1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_camera_matrices(float view[16], float proj[16],
                                              const cugl_app_camera *cam, float aspect);
/**
 * Where the eye is (pitch limited to +-89 degrees).
 * @thread_safety Any thread.
 * @param[out] eye the eye's position, world coordinates; NULL: nothing is written.
 * @param cam the camera; NULL: nothing is written.
 */
CUGL_API void cugl_app_camera_eye(float eye[3], const cugl_app_camera *cam);

CUGL_END_DECLS

#endif /* CUGL_APP_CAMERA_H */
