/*
 * volume.c - a 3-D array of values ray-marched through a box of the scene
 * (cugl_app_draw_volume, cugl/app_draw.h): volume.frag marches each
 * pixel's ray, sampling the volume target's own texture (trilinear, by a
 * sampler of its own) and colouring through the colour map's texture
 * (mesh.c's); the camera's matrix is inverted here.
 */
#include <math.h>
#include <string.h>

#include "app_internal.h"
#include "cugl/app_draw.h"

/* The inverse of column-major `m` into `out`; false where it has none. */
static bool invert(const float m[16], float out[16])
{
    double a[4][8];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 8; c++)
            a[r][c] = c < 4 ? m[c * 4 + r] : (c - 4 == r);
    for (int c = 0; c < 4; c++) { /* Gauss-Jordan with partial pivoting */
        int p = c;
        for (int r = c + 1; r < 4; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (!(fabs(a[p][c]) > 1e-12))
            return false;
        for (int k = 0; k < 8; k++) {
            double t = a[c][k];
            a[c][k] = a[p][k];
            a[p][k] = t;
        }
        double d = a[c][c];
        for (int k = 0; k < 8; k++)
            a[c][k] /= d;
        for (int r = 0; r < 4; r++)
            if (r != c) {
                double f = a[r][c];
                for (int k = 0; k < 8; k++)
                    a[r][k] -= f * a[c][k];
            }
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            out[c * 4 + r] = (float)a[r][c + 4];
    return true;
}

/* The desc with its defaults, checked; the range's scale. */
static cugl_status resolved(cugl_app_volume_desc *v, const cugl_app_volume_desc *in,
                            float *scale, const char *who)
{
    if (!in || !in->volume)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL",
                          !in ? "volume" : "volume->volume");
    *v = *in;
    if (cugl__app_target_kind(v->volume) != CUGL_APP_TARGET_VOLUME)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "volume->volume is not a volume (CUGL_APP_TARGET_VOLUME)");
    bool no_box = true;
    for (int i = 0; i < 3; i++)
        no_box = no_box && v->min[i] == 0 && v->max[i] == 0;
    for (int i = 0; i < 3 && no_box; i++) {
        v->min[i] = -1;
        v->max[i] = 1;
    }
    for (int i = 0; i < 3; i++)
        if (!isfinite(v->min[i]) || !isfinite(v->max[i]) || !(v->max[i] > v->min[i]))
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "the box's axis %d from %g to %g: finite, min below max", i,
                              (double)v->min[i], (double)v->max[i]);
    if (v->vmin == 0 && v->vmax == 0)
        v->vmax = 1;
    if (!isfinite(v->vmin) || !isfinite(v->vmax) || !(v->vmax > v->vmin) ||
        !isfinite(v->vmax - v->vmin))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the values' range %g .. %g: finite, vmin below vmax", (double)v->vmin,
                          (double)v->vmax);
    *scale = 1.0f / (v->vmax - v->vmin);
    v->density = v->density != 0 ? v->density : 0.05f;
    v->steps = v->steps ? v->steps : 256;
    if (!(v->density > 0 && v->density <= 1) || v->steps < 1 || v->steps > 4096)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "density %g and %d steps: density above 0 and at most 1, 1 to 4096 "
                          "steps",
                          (double)v->density, v->steps);
    if ((unsigned)v->colormap >= CUGL__APP_COLORMAPS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "colour map %d is none",
                          (int)v->colormap);
    return CUGL_OK;
}

/* The march, in the volume's GL turn; the state it changes put back. */
static cugl_status march(cugl__app_drawer_objects *d, GLuint map, GLuint texture,
                         const cugl_app_volume_desc *v, const float inverse[16], float scale,
                         const char *who)
{
    GLint program = 0, vao = 0, tex2d = 0, tex3d = 0, sampler = 0, active = 0;
    GLint src_rgb, dst_rgb, src_a, dst_a;
    glGetIntegerv(GL_CURRENT_PROGRAM, &program);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vao);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
    glActiveTexture(GL_TEXTURE0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &tex2d);
    glActiveTexture(GL_TEXTURE1);
    glGetIntegerv(GL_TEXTURE_BINDING_3D, &tex3d);
    glGetIntegerv(GL_SAMPLER_BINDING, &sampler);
    glActiveTexture((GLenum)active);
    glGetIntegerv(GL_BLEND_SRC_RGB, &src_rgb);
    glGetIntegerv(GL_BLEND_DST_RGB, &dst_rgb);
    glGetIntegerv(GL_BLEND_SRC_ALPHA, &src_a);
    glGetIntegerv(GL_BLEND_DST_ALPHA, &dst_a);
    GLboolean blend = glIsEnabled(GL_BLEND), depth = glIsEnabled(GL_DEPTH_TEST);
    cugl_app_drain_gl_errors();
    glUseProgram(d->volume_program);
    glBindVertexArray(d->vao);
    glBindTextureUnit(0, map);
    glBindTextureUnit(1, texture);
    glBindSampler(1, d->volume_sampler);
    glUniformMatrix4fv(0, 1, GL_FALSE, inverse);
    glUniform3fv(1, 1, v->min);
    glUniform3fv(2, 1, v->max);
    glUniform2f(3, v->vmin, scale);
    glUniform1f(4, v->density);
    glUniform1i(5, v->steps);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_ONE, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glBlendFuncSeparate((GLenum)src_rgb, (GLenum)dst_rgb, (GLenum)src_a, (GLenum)dst_a);
    (blend ? glEnable : glDisable)(GL_BLEND);
    (depth ? glEnable : glDisable)(GL_DEPTH_TEST);
    glBindSampler(1, (GLuint)sampler);
    glBindTextureUnit(1, (GLuint)tex3d);
    glBindTextureUnit(0, (GLuint)tex2d);
    glBindVertexArray((GLuint)vao);
    glUseProgram((GLuint)program);
    return cugl_app_check_gl(who, "marching the volume");
}

/* The volume program and its sampler, made at first use. */
static cugl_status volume_objects(cugl__app_drawer_objects **out, cugl_app_context *ctx,
                                  const char *who)
{
    CUGL__TRY(cugl__app_drawer_objects_of(out, ctx, who));
    cugl__app_drawer_objects *d = *out;
    if (d->volume_program && d->volume_sampler)
        return CUGL_OK; /* made: no GL call on a frame's draw */
    if (!d->volume_program) {
        cugl_status st = cugl_app_program(&d->volume_program, "volume",
                                          (const char *)cugl_shader_volume_vert,
                                          (const char *)cugl_shader_volume_frag);
        if (st != CUGL_OK)
            return cugl__as_own(st, who);
    }
    if (!d->volume_sampler) {
        glCreateSamplers(1, &d->volume_sampler);
        glSamplerParameteri(d->volume_sampler, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
        glSamplerParameteri(d->volume_sampler, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
        glSamplerParameteri(d->volume_sampler, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glSamplerParameteri(d->volume_sampler, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glSamplerParameteri(d->volume_sampler, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
    }
    return cugl_app_check_gl(who, "making the volume's program");
}

CUGL_API cugl_status cugl_app_draw_volume(const cugl_app_volume_desc *volume,
                                          const float matrix[16])
{
    cugl_app_volume_desc v;
    float scale = 1, inverse[16];
    CUGL__TRY(resolved(&v, volume, &scale, __func__));
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    if (!invert(matrix ? matrix : identity, inverse))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the matrix has no inverse: no ray can be found through it");
    cugl_app_context *ctx = cugl__app_target_context(v.volume);
    cugl__app_drawer_objects *d = NULL;
    GLuint map = 0;
    CUGL__TRY(volume_objects(&d, ctx, __func__));
    CUGL__TRY(cugl__app_colormap_texture(&map, ctx, v.colormap, __func__));
    cugl_status st = cugl_app_target_gl_begin(v.volume);
    if (st != CUGL_OK)
        return cugl__as_own(st, __func__);
    GLuint texture = cugl_app_target_gl_name(v.volume);
    st = texture ? march(d, map, texture, &v, inverse, scale, __func__) : cugl_last_status();
    cugl_status end = cugl_app_target_gl_end(v.volume);
    return cugl__as_own(st != CUGL_OK ? st : end, __func__);
}
