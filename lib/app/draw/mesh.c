/*
 * mesh.c - triangle meshes, lines, line strips and points drawn from the
 * buffers CUDA writes (cugl_app_draw_mesh, _lines, _line_strip, _points;
 * cugl/app_draw.h), and lines from host memory (the axes'): mesh.vert
 * reads positions and scalars as storage buffers, the indices are the
 * draw's element buffer (each vertex transformed once, however many
 * triangles share it: drawn vertex by vertex from an index buffer of
 * storage, 2M triangles took 1.65 times a hand-written glDrawElements on
 * Mesa), mesh.frag colours through the colour map (a 256 x 1 texture) and
 * lights a triangle by its face's normal. The
 * program, an empty vertex array and one texture a colour map are made
 * once a context, on first use, and kept with its other drawing objects
 * (blit.c's).
 */
#include <math.h>
#include <string.h>

#include "app_internal.h"
#include "cugl/app_draw.h"

cugl_status cugl__app_colormap_texture(GLuint *out, cugl_app_context *ctx,
                                       cugl_app_colormap map, const char *who)
{
    cugl__app_drawer_objects *d = NULL;
    CUGL__TRY(cugl__app_drawer_objects_of(&d, ctx, who));
    *out = d->colormaps[map];
    if (d->vao && *out)
        return CUGL_OK; /* made: no GL call on a frame's draw */
    if (!d->vao)
        glCreateVertexArrays(1, &d->vao);
    if (!d->colormaps[map]) {
        uint8_t table[1024];
        CUGL__TRY(cugl_app_colormap_table(map, table));
        glCreateTextures(GL_TEXTURE_2D, 1, &d->colormaps[map]);
        glTextureStorage2D(d->colormaps[map], 1, GL_RGBA8, 256, 1);
        cugl__gl_pixels saved;
        cugl__gl_pixels_set(&saved, false, 0, 4, 0, 0);
        glTextureSubImage2D(d->colormaps[map], 0, 0, 0, 256, 1, GL_RGBA, GL_UNSIGNED_BYTE,
                            table);
        cugl__gl_pixels_restore(&saved);
    }
    *out = d->colormaps[map];
    return cugl_app_check_gl(who, "making a colour map's texture");
}

/* The context's mesh program, vertex array and colour map `map`'s texture,
 * made where there are none yet. */
static cugl_status mesh_objects(cugl__app_drawer_objects **out, cugl_app_context *ctx,
                                cugl_app_colormap map, const char *who)
{
    CUGL__TRY(cugl__app_drawer_objects_of(out, ctx, who));
    cugl__app_drawer_objects *d = *out;
    if (!d->mesh_program) {
        cugl_status st = cugl_app_program(&d->mesh_program, "mesh",
                                          (const char *)cugl_shader_mesh_vert,
                                          (const char *)cugl_shader_mesh_frag);
        if (st != CUGL_OK)
            return cugl__as_own(st, who);
    }
    GLuint texture = 0;
    return cugl__app_colormap_texture(&texture, ctx, map, who);
}

/* What a draw call draws: GL's mode, vertices an element (through the
 * indices, or in order), its elements' name, whether it takes indices. */
typedef struct shape {
    GLenum mode;
    int per;
    const char *elements;
    bool indexed, lit;
} shape;

static const shape triangles_shape = {GL_TRIANGLES, 3, "triangles", true, true};
static const shape segments_shape = {GL_LINES, 2, "segments", true, false};
static const shape strip_shape = {GL_LINE_STRIP, 1, "strip vertices", false, false};
static const shape points_shape = {GL_POINTS, 1, "points", false, false};

/* Why `t` (of the mesh's field `name`) cannot be drawn from, NULL where it
 * can: a buffer of the positions' context holding `need` bytes. */
static const char *unusable(const cugl_app_target *t, const cugl_app_context *ctx,
                            size_t need, size_t *has)
{
    cugl_app_target_size(t, NULL, NULL, NULL, has);
    if (cugl__app_target_kind(t) != CUGL_APP_TARGET_BUFFER)
        return "is not a buffer (CUGL_APP_TARGET_BUFFER)";
    if (cugl__app_target_context(t) != ctx)
        return "is of another context than the positions";
    return need > *has ? "is too small" : NULL;
}

/* The desc's arguments checked against the counts; the range's scale. */
static cugl_status check(const cugl_app_mesh_desc *m, const shape *sh, size_t vertices,
                         size_t count, int components, float *scale, const char *who)
{
    if (!m || !m->positions)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL",
                          !m ? "mesh" : "mesh->positions");
    if (components != 3 && components != 4)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%d components a vertex: 3 or 4",
                          components);
    if ((unsigned)m->colormap >= CUGL__APP_COLORMAPS)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "colour map %d is none",
                          (int)m->colormap);
    if (m->shading != CUGL_APP_SHADING_FLAT && m->shading != CUGL_APP_SHADING_NONE)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "shading %d: CUGL_APP_SHADING_FLAT (0) or CUGL_APP_SHADING_NONE (1)",
                          (int)m->shading);
    if (vertices > UINT32_MAX / 4 || count > (size_t)INT32_MAX / (size_t)sh->per)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%zu vertices, %zu %s: at most %u and %d", vertices, count,
                          sh->elements, UINT32_MAX / 4, INT32_MAX / sh->per);
    if (m->indices && !sh->indexed)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s take no indices (mesh->indices is not NULL)", sh->elements);
    if (!m->indices && count > vertices / (size_t)sh->per)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%zu %s without indices need %zu vertices; there are %zu", count,
                          sh->elements, count * (size_t)sh->per, vertices);
    const struct {
        const cugl_app_target *t;
        const char *name;
        size_t need;
    } fields[] = {
        {m->positions, "positions", vertices * (size_t)components * sizeof(float)},
        {m->scalars, "scalars", vertices * sizeof(float)},
        {m->indices, "indices", count * (size_t)sh->per * sizeof(uint32_t)},
    };
    const cugl_app_context *ctx = cugl__app_target_context(m->positions);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        size_t has = 0;
        const char *why = fields[i].t ? unusable(fields[i].t, ctx, fields[i].need, &has) : NULL;
        if (why)
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "mesh->%s %s: %zu bytes wanted, it holds %zu", fields[i].name, why,
                              fields[i].need, has);
    }
    float lo = m->vmin, hi = m->vmax;
    if (lo == 0 && hi == 0)
        hi = 1;
    if (!isfinite(lo) || !isfinite(hi) || !(hi > lo) || !isfinite(hi - lo) ||
        !isfinite(1.0f / (hi - lo)))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "the scalars' range %g .. %g: finite, vmin below vmax, vmax - vmin "
                          "finite",
                          (double)lo, (double)hi);
    *scale = 1.0f / (hi - lo);
    return cugl__app_check_rgba(m->rgba, who);
}

/* The GL state the draw changes, to be put back. */
typedef struct saved_state {
    GLint program, vao, texture, ssbo[2];
    GLboolean depth_test, depth_mask, point_size;
    GLint depth_func;
} saved_state;

static void save(saved_state *s)
{
    glGetIntegerv(GL_CURRENT_PROGRAM, &s->program);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &s->vao);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &s->texture); /* unit 0: the draw's active unit */
    for (GLuint i = 0; i < 2; i++)
        glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, i, &s->ssbo[i]);
    s->depth_test = glIsEnabled(GL_DEPTH_TEST);
    s->point_size = glIsEnabled(GL_PROGRAM_POINT_SIZE);
    glGetBooleanv(GL_DEPTH_WRITEMASK, &s->depth_mask);
    glGetIntegerv(GL_DEPTH_FUNC, &s->depth_func);
}

static void restore(const saved_state *s)
{
    glUseProgram((GLuint)s->program);
    glBindVertexArray((GLuint)s->vao);
    glBindTextureUnit(0, (GLuint)s->texture);
    for (GLuint i = 0; i < 2; i++)
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, (GLuint)s->ssbo[i]);
    (s->depth_test ? glEnable : glDisable)(GL_DEPTH_TEST);
    glDepthMask(s->depth_mask);
    glDepthFunc((GLenum)s->depth_func);
}

/* How it is drawn: the counts, the positions' floats a vertex, the
 * range's scale, the points' size, the matrix. */
typedef struct draw_args {
    size_t vertices, count;
    int components;
    float scale, point_size;
    const float *matrix;
} draw_args;

/* The draw itself from GL buffers (positions; scalars where m has them;
 * indices, 0 for none), in their GL turn. */
static cugl_status draw_buffers(cugl__app_drawer_objects *d, const cugl_app_mesh_desc *m,
                                const shape *sh, const draw_args *a, GLuint positions,
                                GLuint scalars, GLuint indices, const char *who)
{
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    static const float white[4] = {1, 1, 1, 1};
    const float *rgba = m->rgba[0] == 0 && m->rgba[1] == 0 && m->rgba[2] == 0 && m->rgba[3] == 0
                            ? white
                            : m->rgba;
    saved_state s;
    save(&s);
    cugl_app_drain_gl_errors();
    glUseProgram(d->mesh_program);
    glBindVertexArray(d->vao);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, positions);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, scalars);
    glVertexArrayElementBuffer(d->vao, indices);
    glBindTextureUnit(0, d->colormaps[m->colormap]);
    glUniformMatrix4fv(0, 1, GL_FALSE, a->matrix ? a->matrix : identity);
    glUniform1i(1, a->components);
    glUniform1f(2, a->point_size);
    glUniform1i(3, m->scalars != NULL);
    glUniform1ui(4, (GLuint)a->vertices);
    glUniform2f(5, m->vmin == 0 && m->vmax == 0 ? 0.0f : m->vmin, a->scale);
    glUniform4fv(6, 1, rgba);
    glUniform1i(7, sh->lit && m->shading == CUGL_APP_SHADING_FLAT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDepthMask(GL_TRUE);
    if (sh->mode == GL_POINTS)
        glEnable(GL_PROGRAM_POINT_SIZE);
    GLsizei n = (GLsizei)(a->count * (size_t)sh->per);
    if (indices)
        glDrawElements(sh->mode, n, GL_UNSIGNED_INT, NULL);
    else
        glDrawArrays(sh->mode, 0, n);
    (s.point_size ? glEnable : glDisable)(GL_PROGRAM_POINT_SIZE);
    restore(&s);
    return cugl_app_check_gl(who, "drawing the mesh");
}

/* The draw from the targets' GL objects, in their GL turn. */
static cugl_status draw(cugl__app_drawer_objects *d, const cugl_app_mesh_desc *m,
                        const shape *sh, const draw_args *a, const char *who)
{
    GLuint positions = cugl_app_target_gl_name(m->positions);
    GLuint scalars = m->scalars ? cugl_app_target_gl_name(m->scalars) : positions;
    GLuint indices = m->indices ? cugl_app_target_gl_name(m->indices) : 0;
    if (!positions || !scalars || (m->indices && !indices))
        return cugl_last_status();
    return draw_buffers(d, m, sh, a, positions, scalars, indices, who);
}

cugl_status cugl__app_draw_host_lines(cugl_app_context *ctx, const float *xyz, size_t vertices,
                                      const float *matrix, const float rgba[4], const char *who)
{
    if (vertices < 2)
        return CUGL_OK;
    cugl__app_drawer_objects *d = NULL;
    CUGL__TRY(mesh_objects(&d, ctx, CUGL_APP_COLORMAP_CUGL, who));
    if (!d->host_lines)
        glCreateBuffers(1, &d->host_lines);
    glNamedBufferData(d->host_lines, (GLsizeiptr)(vertices * 3 * sizeof(float)), xyz,
                      GL_STREAM_DRAW);
    cugl_app_mesh_desc m = {.components = 3, .shading = CUGL_APP_SHADING_NONE};
    memcpy(m.rgba, rgba, sizeof m.rgba);
    draw_args a = {vertices, vertices / 2, 3, 1, 1, matrix};
    return draw_buffers(d, &m, &segments_shape, &a, d->host_lines, d->host_lines, 0, who);
}

/* Any of the drawers: checked, then drawn in one GL turn of its targets. */
static cugl_status draw_shape(const cugl_app_mesh_desc *m, const shape *sh, size_t vertices,
                             size_t count, float point_size, const float *matrix,
                             const char *who)
{
    draw_args a = {vertices, count, m && m->components ? m->components : 3, 1, point_size,
                   matrix};
    CUGL__TRY(check(m, sh, vertices, count, a.components, &a.scale, who));
    if (count == 0)
        return CUGL_OK;
    /* One turn, each target once. */
    cugl_app_target *turn[3] = {m->positions};
    int n = 1;
    if (m->scalars && m->scalars != m->positions)
        turn[n++] = m->scalars;
    if (m->indices && m->indices != m->positions && m->indices != m->scalars)
        turn[n++] = m->indices;
    cugl__app_drawer_objects *d = NULL;
    CUGL__TRY(mesh_objects(&d, cugl__app_target_context(m->positions), m->colormap, who));
    cugl_status st = cugl_app_targets_gl_begin(turn, n);
    if (st != CUGL_OK)
        return cugl__as_own(st, who);
    st = draw(d, m, sh, &a, who);
    cugl_status end = cugl_app_targets_gl_end(turn, n);
    return cugl__as_own(st != CUGL_OK ? st : end, who);
}

CUGL_API cugl_status cugl_app_draw_mesh(const cugl_app_mesh_desc *mesh, size_t vertices,
                                        size_t triangles, const float matrix[16])
{
    return draw_shape(mesh, &triangles_shape, vertices, triangles, 1, matrix, __func__);
}

CUGL_API cugl_status cugl_app_draw_lines(const cugl_app_mesh_desc *mesh, size_t vertices,
                                         size_t segments, const float matrix[16])
{
    return draw_shape(mesh, &segments_shape, vertices, segments, 1, matrix, __func__);
}

CUGL_API cugl_status cugl_app_draw_line_strip(const cugl_app_mesh_desc *mesh, size_t vertices,
                                              const float matrix[16])
{
    return draw_shape(mesh, &strip_shape, vertices, vertices, 1, matrix, __func__);
}

CUGL_API cugl_status cugl_app_draw_points(const cugl_app_mesh_desc *mesh, size_t vertices,
                                          float point_size, const float matrix[16])
{
    if (!(point_size > 0 && point_size <= 4096))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "point size %g: more than 0, at most 4096", (double)point_size);
    return draw_shape(mesh, &points_shape, vertices, vertices, point_size, matrix, __func__);
}
