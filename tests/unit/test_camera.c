/*
 * test_camera.c - libcugl-app's orbit camera, no GL
 * needed: defaults, the eye and view matrix against the formulas, the
 * pitch clamp.
 */
#include <math.h>

#include "app_test.h"

static const double PI = 3.14159265358979323846;

static void assert_near(double got, double want, double tolerance, const char *what)
{
    if (fabs(got - want) > tolerance)
        fail_msg("%s is %.9g, expected %.9g", what, got, want);
}

/* m (column-major) times (x, y, z, 1). */
static void transform(const float m[16], const float p[3], double out[4])
{
    for (int r = 0; r < 4; r++)
        out[r] = (double)m[r] * p[0] + (double)m[4 + r] * p[1] + (double)m[8 + r] * p[2] +
                 (double)m[12 + r];
}

static void camera_defaults(void **state)
{
    (void)state;
    cugl_app_camera cam;
    memset(&cam, 0xff, sizeof cam);
    cugl_app_camera_init(&cam);
    assert_true(cam.target[0] == 0 && cam.target[1] == 0 && cam.target[2] == 0);
    assert_true(cam.distance == 3.0f && cam.yaw == 0.6f && cam.pitch == 0.5f);
    assert_near(cam.fov_y, PI / 4, 1e-7, "fov_y");
    assert_true(cam.z_near > 0 && cam.z_far > cam.z_near);
}

static void camera_eye_and_view(void **state)
{
    (void)state;
    static const struct {
        float yaw, pitch, distance;
    } cases[] = {{0.6f, 0.5f, 3}, {0, 0, 1}, {-2.5f, -1.2f, 10}, {3.1f, 1.5f, 0.25f}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_app_camera cam;
        cugl_app_camera_init(&cam);
        cam.target[0] = 1;
        cam.target[1] = -2;
        cam.target[2] = 0.5f;
        cam.yaw = cases[i].yaw;
        cam.pitch = cases[i].pitch;
        cam.distance = cases[i].distance;
        double y = cam.yaw, p = cam.pitch, d = cam.distance;
        float eye[3];
        cugl_app_camera_eye(eye, &cam);
        assert_near(eye[0], 1 + d * cos(p) * sin(y), 1e-5, "eye x");
        assert_near(eye[1], -2 + d * sin(p), 1e-5, "eye y");
        assert_near(eye[2], 0.5 + d * cos(p) * cos(y), 1e-5, "eye z");

        float view[16], proj[16];
        cugl_app_camera_matrices(view, proj, &cam, 2.0f);
        double v[4];
        transform(view, eye, v); /* the eye goes to the origin */
        assert_near(v[0], 0, 1e-5, "view * eye x");
        assert_near(v[1], 0, 1e-5, "view * eye y");
        assert_near(v[2], 0, 1e-5, "view * eye z");
        assert_near(v[3], 1, 1e-6, "view * eye w");
        transform(view, cam.target, v); /* the target straight ahead */
        assert_near(v[0], 0, 1e-5, "view * target x");
        assert_near(v[1], 0, 1e-5, "view * target y");
        assert_near(v[2], -d, 1e-5, "view * target z");

        double f = 1 / tan(cam.fov_y / 2);
        assert_near(proj[0], f / 2, 1e-5, "proj[0]");
        assert_near(proj[5], f, 1e-5, "proj[5]");
        assert_near(proj[11], -1, 0, "proj[11]");
        assert_near(proj[10], -(cam.z_far + cam.z_near) / (cam.z_far - cam.z_near), 1e-5,
                    "proj[10]");
    }
}

static void camera_pitch_is_clamped(void **state)
{
    (void)state;
    const double limit = 89 * PI / 180;
    for (int sign = -1; sign <= 1; sign += 2) {
        cugl_app_camera cam;
        cugl_app_camera_init(&cam);
        cam.pitch = 3.0f * sign;
        float eye[3];
        cugl_app_camera_eye(eye, &cam);
        assert_near(eye[1], cam.distance * sin(sign * limit), 1e-5, "clamped eye y");
        assert_near(eye[0], cam.distance * cos(limit) * sin(cam.yaw), 1e-5, "clamped eye x");
        float view[16];
        cugl_app_camera_matrices(view, NULL, &cam, 1);
        for (int i = 0; i < 16; i++)
            assert_false(isnan(view[i]));
    }
}

/* Without a window there is no input: nothing moves. */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(camera_defaults),
        cmocka_unit_test(camera_eye_and_view),
        cmocka_unit_test(camera_pitch_is_clamped),
    };
    int failed = cugl_test_run(tests);
    return failed;
}
