/*
 * colorbar.c - a colour map's bar with its values (cugl_app_draw_colorbar,
 * cugl/app_draw.h): the bar a quad whose rows read the map's texture (the
 * mesh drawer's, cugl__app_colormap_texture) as a mesh's scalars would,
 * the ticks scissored clears, the labels text (text.c).
 */
#include <math.h>
#include <stdio.h>

#include "app_internal.h"
#include "cugl/app_draw.h"

static const char *bar_vertex =
    "#version 450 core\n"
    "// The bar: a quad over the viewport that the scissor cuts to the box.\n"
    "void main() {\n"
    "    vec2 c = vec2(gl_VertexID & 1, gl_VertexID >> 1) * 4.0 - 1.0;\n"
    "    gl_Position = vec4(c, 0.0, 1.0);\n"
    "}\n";
static const char *bar_fragment =
    "#version 450 core\n"
    "// Row k of the box: the map's entry for t = (k + 0.5) / height.\n"
    "layout(location = 0) uniform vec2 box; // its bottom in window pixels, its height\n"
    "layout(binding = 0) uniform sampler2D colormap;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "    float t = clamp((floor(gl_FragCoord.y - box.x) + 0.5) / box.y, 0.0, 1.0);\n"
    "    colour = texelFetch(colormap, ivec2(int(t * 255.0 + 0.5), 0), 0);\n"
    "}\n";

/* The desc with its defaults in place, checked. */
static cugl_status resolved(cugl_app_colorbar_desc *b, const cugl_app_colorbar_desc *in,
                            const char *who)
{
    *b = *in;
    b->width = b->width ? b->width : 16;
    b->height = b->height ? b->height : 200;
    b->ticks = b->ticks ? b->ticks : 5;
    b->text_pixels = b->text_pixels != 0 ? b->text_pixels : 14;
    if (b->vmin == 0 && b->vmax == 0)
        b->vmax = 1;
    if (b->rgba[0] == 0 && b->rgba[1] == 0 && b->rgba[2] == 0 && b->rgba[3] == 0)
        b->rgba[0] = b->rgba[1] = b->rgba[2] = b->rgba[3] = 1;
    if ((unsigned)b->colormap >= CUGL__APP_COLORMAPS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "colour map %d is none",
                          (int)b->colormap);
    if (!isfinite(b->vmin) || !isfinite(b->vmax) || !(b->vmax > b->vmin) ||
        !isfinite(b->vmax - b->vmin))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the range %g .. %g: finite, vmin below vmax", (double)b->vmin,
                          (double)b->vmax);
    if (b->width < 1 || b->height < 2 || b->ticks < 2 || b->width > 16384 ||
        b->height > 16384 || b->ticks > 64)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a bar %d x %d pixels with %d ticks: at least 1 x 2 and 2 ticks, "
                          "at most 16384 x 16384 and 64",
                          b->width, b->height, b->ticks);
    return cugl__app_check_rgba(b->rgba, who);
}

/* The bar and its ticks, scissored to their boxes (window pixels, the
 * viewport at vp). */
static cugl_status bar_and_ticks(cugl_app_context *ctx, const cugl_app_colorbar_desc *b,
                                 const GLint vp[4], const char *who)
{
    cugl__app_drawer_objects *o = NULL;
    CUGL__TRY(cugl__app_drawer_objects_of(&o, ctx, who));
    if (!o->bar_program) {
        cugl_status st = cugl_app_program(&o->bar_program, "colorbar", bar_vertex, bar_fragment);
        if (st != CUGL_OK)
            return cugl__as_own(st, who);
    }
    GLuint map = 0; /* (and the drawers' vertex array made) */
    CUGL__TRY(cugl__app_colormap_texture(&map, ctx, b->colormap, who));
    GLint program = 0, vao = 0, texture = 0, scissor[4];
    GLfloat clear[4];
    glGetIntegerv(GL_CURRENT_PROGRAM, &program);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vao);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture);
    glGetIntegerv(GL_SCISSOR_BOX, scissor);
    glGetFloatv(GL_COLOR_CLEAR_VALUE, clear);
    GLboolean scissor_on = glIsEnabled(GL_SCISSOR_TEST), depth_on = glIsEnabled(GL_DEPTH_TEST),
              blend_on = glIsEnabled(GL_BLEND);
    cugl_app_drain_gl_errors();
    int x = vp[0] + b->x, y = vp[1] + b->y;
    glEnable(GL_SCISSOR_TEST);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_BLEND);
    glScissor(x, y, b->width, b->height);
    glUseProgram(o->bar_program);
    glBindVertexArray(o->vao);
    glBindTextureUnit(0, map);
    glUniform2f(0, (float)y, (float)b->height);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
    glClearColor(b->rgba[0], b->rgba[1], b->rgba[2], b->rgba[3]);
    for (int k = 0; k < b->ticks; k++) {
        int row = (int)lround((double)(b->height - 1) * k / (b->ticks - 1));
        glScissor(x + b->width + 1, y + row, 4, 1);
        glClear(GL_COLOR_BUFFER_BIT);
    }
    glClearColor(clear[0], clear[1], clear[2], clear[3]);
    glScissor(scissor[0], scissor[1], scissor[2], scissor[3]);
    (scissor_on ? glEnable : glDisable)(GL_SCISSOR_TEST);
    (depth_on ? glEnable : glDisable)(GL_DEPTH_TEST);
    (blend_on ? glEnable : glDisable)(GL_BLEND);
    glBindTextureUnit(0, (GLuint)texture);
    glBindVertexArray((GLuint)vao);
    glUseProgram((GLuint)program);
    return cugl_app_check_gl(who, "drawing the colorbar");
}

CUGL_API cugl_status cugl_app_draw_colorbar(cugl_app_context *ctx,
                                            const cugl_app_colorbar_desc *bar)
{
    if (!ctx || !bar)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !ctx ? "ctx" : "bar");
    cugl_app_colorbar_desc b;
    CUGL__TRY(resolved(&b, bar, __func__));
    GLint vp[4];
    glGetIntegerv(GL_VIEWPORT, vp);
    CUGL__TRY(bar_and_ticks(ctx, &b, vp, __func__));
    /* Each label right of its tick, its capitals' middle on the tick's row. */
    for (int k = 0; k < b.ticks; k++) {
        int row = (int)lround((double)(b.height - 1) * k / (b.ticks - 1));
        double value = b.vmin + (double)(b.vmax - b.vmin) * k / (b.ticks - 1);
        char label[32];
        snprintf(label, sizeof label, "%.3g", fabs(value) < 1e-12 * (b.vmax - b.vmin) ? 0.0
                                                                                       : value);
        float baseline = (float)(b.y + row) - 0.36f * b.text_pixels;
        cugl_status st = cugl_app_draw_text(ctx, label, (float)(b.x + b.width + 8), baseline,
                                            b.text_pixels, b.rgba);
        if (st != CUGL_OK)
            return cugl__as_own(st, __func__);
    }
    return CUGL_OK;
}
