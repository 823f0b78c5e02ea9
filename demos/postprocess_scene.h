/*
 * postprocess_scene.h - the 3-D scene cugl-postprocess filters: a lit,
 * turning torus knot and five cubes circling it over a chequered floor,
 * drawn by GL into whatever framebuffer is bound.
 */
#ifndef CUGL_DEMO_POSTPROCESS_SCENE_H
#define CUGL_DEMO_POSTPROCESS_SCENE_H

#include <glad/gl.h>

#include <cugl/app.h>

/* One vertex buffer, each object a range of it, and the program. */
typedef struct pp_scene {
    GLuint program, vao, vbo;
    GLint floor_first, cube_first, knot_first;
} pp_scene;

/** Build the shaders and the vertex buffer (the GL context current);
 * `who` names the failure. On a failure, pp_scene_destroy frees what was made. */
cugl_status pp_scene_create(pp_scene *s, const char *who);

/** Free it; a zeroed scene is fine. */
void pp_scene_destroy(pp_scene *s);

/** The camera that sees the whole scene (R resets to it). */
void pp_scene_camera(cugl_app_camera *camera);

/** The scene at `time` seconds, seen by `camera`, into the bound
 * framebuffer of width x height (viewport set here), depth tested. */
void pp_scene_draw(const pp_scene *s, const cugl_app_camera *camera, float time, int width,
                   int height);

#endif /* CUGL_DEMO_POSTPROCESS_SCENE_H */
