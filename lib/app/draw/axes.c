/*
 * axes.c - labels anchored in 3-D (cugl_app_draw_label) and axes with
 * ticks and values (cugl_app_draw_axes; cugl/app_draw.h): points of the
 * scene taken through the camera's matrix to the viewport's pixels on the
 * CPU, the axes' lines and ticks drawn as segments (mesh.c's, from host
 * memory), their values and names as text (text.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_internal.h"
#include "cugl/app_draw.h"

enum { MAX_TICKS = 64 };

/* The viewport's pixel (from its bottom-left) of `xyz` through `m` (NULL:
 * none); false where it is behind the eye or off the clip volume. */
static bool project(const float xyz[3], const float *m, const GLint vp[4], float *px,
                    float *py)
{
    float c[4] = {xyz[0], xyz[1], xyz[2], 1};
    if (m)
        for (int r = 0; r < 4; r++)
            c[r] = m[r] * xyz[0] + m[4 + r] * xyz[1] + m[8 + r] * xyz[2] + m[12 + r];
    if (!(c[3] > 1e-6f))
        return false;
    float x = c[0] / c[3], y = c[1] / c[3], z = c[2] / c[3];
    if (!(fabsf(x) <= 1 && fabsf(y) <= 1 && fabsf(z) <= 1))
        return false;
    *px = (x * 0.5f + 0.5f) * (float)vp[2];
    *py = (y * 0.5f + 0.5f) * (float)vp[3];
    return true;
}

CUGL_API cugl_status cugl_app_draw_label(cugl_app_context *ctx, const char *text,
                                         const float xyz[3], const float matrix[16],
                                         float pixels, const float rgba[4])
{
    if (!ctx || !text || !xyz)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !ctx ? "ctx" : !text ? "text" : "xyz");
    CUGL__TRY(cugl__app_check_rgba(rgba, __func__));
    if (!isfinite(xyz[0]) || !isfinite(xyz[1]) || !isfinite(xyz[2]))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the point (%g, %g, %g) is not finite", (double)xyz[0],
                          (double)xyz[1], (double)xyz[2]);
    GLint vp[4];
    glGetIntegerv(GL_VIEWPORT, vp);
    float x = 0, y = 0;
    if (!project(xyz, matrix, vp, &x, &y)) {
        /* Off the picture: nothing drawn, but a bad size is still refused. */
        if (!(pixels >= 4 && pixels <= 256))
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                              "a text %g pixels high: from 4 to 256", (double)pixels);
        return CUGL_OK;
    }
    cugl_status st = cugl_app_draw_text(ctx, text, x, y, pixels, rgba);
    return st == CUGL_OK ? st : cugl__as_own(st, __func__);
}

/* The desc with its defaults in place, checked. */
static cugl_status resolved(cugl_app_axes_desc *a, const cugl_app_axes_desc *in,
                            const char *who)
{
    *a = *in;
    a->ticks = a->ticks ? a->ticks : 5;
    a->text_pixels = a->text_pixels != 0 ? a->text_pixels : 12;
    if (a->rgba[0] == 0 && a->rgba[1] == 0 && a->rgba[2] == 0 && a->rgba[3] == 0)
        a->rgba[0] = a->rgba[1] = a->rgba[2] = a->rgba[3] = 1;
    static const char *const names[3] = {"x", "y", "z"};
    int spans = 0;
    for (int i = 0; i < 3; i++) {
        if (!a->labels[i])
            a->labels[i] = names[i];
        if (!isfinite(a->min[i]) || !isfinite(a->max[i]) || a->max[i] < a->min[i] ||
            !isfinite(a->max[i] - a->min[i]))
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "axis %d from %g to %g: finite, min at most max", i,
                              (double)a->min[i], (double)a->max[i]);
        spans += a->max[i] > a->min[i];
    }
    if (!spans)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the box is a point: at least one axis from min to more");
    if (a->ticks < 2 || a->ticks > MAX_TICKS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%d ticks an axis: 2 to %d",
                          a->ticks, MAX_TICKS);
    if (!(a->text_pixels >= 4 && a->text_pixels <= 256))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a text %g pixels high: from 4 to 256", (double)a->text_pixels);
    return cugl__app_check_rgba(a->rgba, who);
}

/* Axis i's line and ticks as segments (2 + 2 ticks vertices, 3 floats
 * each) into `v`; its tick ends' points into `ends` (3 floats a tick). A
 * tick runs from the axis away from the box, along the next axis that
 * spans (a 40th of the box's largest side). */
static size_t axis_segments(const cugl_app_axes_desc *a, int i, float *v, float *ends)
{
    float extent = 0;
    for (int k = 0; k < 3; k++)
        extent = fmaxf(extent, a->max[k] - a->min[k]);
    int away = (i + 1) % 3;
    if (!(a->max[away] > a->min[away]))
        away = (i + 2) % 3;
    size_t n = 0;
    for (int k = 0; k < 3; k++) { /* the axis: from the min corner along i */
        v[n * 3 + k] = a->min[k];
        v[(n + 1) * 3 + k] = k == i ? a->max[k] : a->min[k];
    }
    n += 2;
    for (int t = 0; t < a->ticks; t++, n += 2) {
        float at = a->min[i] + (a->max[i] - a->min[i]) * (float)t / (float)(a->ticks - 1);
        for (int k = 0; k < 3; k++) {
            v[n * 3 + k] = k == i ? at : a->min[k];
            v[(n + 1) * 3 + k] = v[n * 3 + k] - (k == away ? extent / 40 : 0);
            ends[t * 3 + k] = v[n * 3 + k] - (k == away ? extent / 16 : 0);
        }
    }
    return n;
}

CUGL_API cugl_status cugl_app_draw_axes(cugl_app_context *ctx, const cugl_app_axes_desc *axes,
                                        const float matrix[16])
{
    if (!ctx || !axes)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !ctx ? "ctx" : "axes");
    cugl_app_axes_desc a;
    CUGL__TRY(resolved(&a, axes, __func__));
    float v[(2 + 2 * MAX_TICKS) * 3], ends[MAX_TICKS * 3];
    for (int i = 0; i < 3; i++) {
        if (!(a.max[i] > a.min[i]))
            continue;
        size_t n = axis_segments(&a, i, v, ends);
        cugl_status st = cugl__app_draw_host_lines(ctx, v, n, matrix, a.rgba, __func__);
        for (int t = 0; t < a.ticks && st == CUGL_OK; t++) {
            double value = a.min[i] + (double)(a.max[i] - a.min[i]) * t / (a.ticks - 1);
            char label[32];
            snprintf(label, sizeof label, "%.3g",
                     fabs(value) < 1e-6 * (a.max[i] - a.min[i]) ? 0.0 : value);
            st = cugl_app_draw_label(ctx, label, ends + 3 * t, matrix, a.text_pixels, a.rgba);
        }
        /* The axis's name beyond its far end. */
        float name_at[3] = {a.min[0], a.min[1], a.min[2]};
        name_at[i] = a.max[i] + (a.max[i] - a.min[i]) / 12;
        if (st == CUGL_OK)
            st = cugl_app_draw_label(ctx, a.labels[i], name_at, matrix,
                                     fminf(a.text_pixels * 1.25f, 256), a.rgba);
        if (st != CUGL_OK)
            return cugl__as_own(st, __func__);
    }
    return CUGL_OK;
}
