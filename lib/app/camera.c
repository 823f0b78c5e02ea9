/*
 * camera.c - an orbit camera: a target, a distance and two angles, moved
 * by the mouse and keys of a window, turned into GL matrices with cglm.
 *
 * The eye sits at target + distance * (cos p sin y, sin p, cos p cos y)
 * for yaw y and pitch p, looking at the target with +y up.
 */
#include <math.h>
#include <string.h>

#include <cglm/cglm.h>

#include "app_internal.h"

#define PITCH_LIMIT (89.0f * GLM_PIf / 180.0f)
#define ORBIT_PER_PIXEL 0.008f  /* radians per pixel dragged */
#define ORBIT_PER_SECOND 1.5f   /* radians per second a key is held */
#define ZOOM_PER_STEP 0.9f      /* distance factor per wheel step */
#define MIN_DISTANCE 1e-4f
#define MAX_DISTANCE 1e30f      /* the eye's coordinates stay finite */

CUGL_API void cugl_app_camera_init(cugl_app_camera *cam)
{
    if (!cam)
        return;
    *cam = (cugl_app_camera){
        .target = {0, 0, 0},
        .distance = 3.0f,
        .yaw = 0.6f,
        .pitch = 0.5f,
        .fov_y = GLM_PI_4f,
        .z_near = 0.01f,
        .z_far = 100.0f,
    };
}

static float clamp_pitch(float pitch)
{
    return glm_clamp(pitch, -PITCH_LIMIT, PITCH_LIMIT);
}

CUGL_API void cugl_app_camera_eye(float eye[3], const cugl_app_camera *cam)
{
    if (!eye || !cam)
        return;
    float p = clamp_pitch(cam->pitch), y = cam->yaw;
    eye[0] = cam->target[0] + cam->distance * cosf(p) * sinf(y);
    eye[1] = cam->target[1] + cam->distance * sinf(p);
    eye[2] = cam->target[2] + cam->distance * cosf(p) * cosf(y);
}

static bool key(const cugl_app_context *ctx, int a, int b)
{
    return cugl_app_key_down(ctx, a) || cugl_app_key_down(ctx, b);
}

/* Move the target so the scene follows the cursor at the target's depth. */
static void pan(cugl_app_camera *cam, const cugl_app_context *ctx, double dx, double dy)
{
    vec3 eye, forward, right, up, world_up = {0, 1, 0};
    cugl_app_camera_eye(eye, cam);
    glm_vec3_sub(cam->target, eye, forward);
    glm_vec3_normalize(forward);
    glm_vec3_crossn(forward, world_up, right);
    glm_vec3_cross(right, forward, up);
    int width = 0, height = 0;
    cugl_app_context_size(ctx, &width, &height);
    height = height > 0 ? height : 1;
    float per_pixel = 2.0f * cam->distance * tanf(cam->fov_y * 0.5f) / (float)height;
    glm_vec3_muladds(right, -(float)dx * per_pixel, cam->target);
    glm_vec3_muladds(up, (float)dy * per_pixel, cam->target);
}

/* Whether the camera's numbers make a view: finite, a positive distance, a
 * field of view inside 0 .. pi, 0 < z_near < z_far. */
static cugl_status check_camera(const char *who, const cugl_app_camera *cam)
{
    const float *f = cam->target;
    const char *bad = !isfinite(f[0]) || !isfinite(f[1]) || !isfinite(f[2]) ? "target"
                      : !isfinite(cam->distance) || cam->distance <= 0   ? "distance"
                      : !isfinite(cam->yaw)                              ? "yaw"
                      : !isfinite(cam->pitch)                            ? "pitch"
                      : !(cam->fov_y > 0 && cam->fov_y < GLM_PIf)        ? "fov_y"
                      : !(cam->z_near > 0 && cam->z_far > cam->z_near && isfinite(cam->z_far))
                          ? "z_near or z_far"
                          : NULL;
    if (!bad)
        return CUGL_OK;
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                      "the camera's %s makes no view (target %g %g %g, distance %g, yaw "
                      "%g, pitch %g, fov_y %g, z_near %g, z_far %g)",
                      bad, (double)f[0], (double)f[1], (double)f[2],
                      (double)cam->distance, (double)cam->yaw, (double)cam->pitch,
                      (double)cam->fov_y, (double)cam->z_near, (double)cam->z_far);
}

/* yaw + turn within -pi .. pi, for any finite turn however large. */
static float turned(float yaw, double turn)
{
    return (float)remainder((double)yaw + fmod(turn, 2.0 * GLM_PI), 2.0 * GLM_PI);
}

/* pitch + rise within the pitch limits, for any rise however large. */
static float raised(float pitch, double rise)
{
    return (float)fmax(fmin((double)pitch + rise, PITCH_LIMIT), -PITCH_LIMIT);
}

CUGL_API cugl_status cugl_app_camera_update(cugl_app_camera *cam, const cugl_app_context *ctx,
                                            float dt_seconds)
{
    if (!cam || !ctx)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is NULL", !cam ? "cam" : "ctx");
    if (!isfinite(dt_seconds))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "dt_seconds is %g: not a number of seconds", (double)dt_seconds);
    CUGL__TRY(check_camera(__func__, cam));
    if (cugl_app_key_down(ctx, GLFW_KEY_R) || cugl_app_key_presses(ctx, GLFW_KEY_R) > 0) {
        cugl_app_camera_init(cam);
        return CUGL_OK;
    }
    const cugl_app_input *in = cugl_app_context_input(ctx);
    if (in->left) {
        cam->yaw = turned(cam->yaw, -in->dx * ORBIT_PER_PIXEL);
        cam->pitch = raised(cam->pitch, in->dy * ORBIT_PER_PIXEL);
    }
    if (in->right) {
        float target[3] = {cam->target[0], cam->target[1], cam->target[2]};
        pan(cam, ctx, in->dx, in->dy);
        if (!isfinite(cam->target[0]) || !isfinite(cam->target[1]) || !isfinite(cam->target[2]))
            memcpy(cam->target, target, sizeof target); /* a drag past float's range */
    }
    if (in->scroll != 0)
        cam->distance = (float)glm_clamp(cam->distance * pow(ZOOM_PER_STEP, in->scroll),
                                         MIN_DISTANCE, MAX_DISTANCE);

    double step = ORBIT_PER_SECOND * (dt_seconds > 0 ? (double)dt_seconds : 0.0);
    if (key(ctx, GLFW_KEY_LEFT, GLFW_KEY_A))
        cam->yaw = turned(cam->yaw, -step);
    if (key(ctx, GLFW_KEY_RIGHT, GLFW_KEY_D))
        cam->yaw = turned(cam->yaw, step);
    if (key(ctx, GLFW_KEY_UP, GLFW_KEY_W))
        cam->pitch = raised(cam->pitch, step);
    if (key(ctx, GLFW_KEY_DOWN, GLFW_KEY_S))
        cam->pitch = raised(cam->pitch, -step);

    cam->pitch = clamp_pitch(cam->pitch);
    cam->yaw = turned(cam->yaw, 0);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_camera_matrices(float view[16], float proj[16],
                                              const cugl_app_camera *cam, float aspect)
{
    CUGL__CHECK_NOT_NULL(cam);
    if (!isfinite(aspect))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "aspect is %g: not a ratio",
                          (double)aspect);
    CUGL__TRY(check_camera(__func__, cam));
    vec3 eye, up = {0, 1, 0}, target = {cam->target[0], cam->target[1], cam->target[2]};
    mat4 v, p;
    cugl_app_camera_eye(eye, cam);
    glm_lookat(eye, target, up, v);
    glm_perspective(cam->fov_y, aspect > 0 ? aspect : 1.0f, cam->z_near, cam->z_far, p);
    if (view)
        memcpy(view, v, sizeof v);
    if (proj)
        memcpy(proj, p, sizeof p);
    return CUGL_OK;
}
