/*
 * text.c - text in the picture (cugl_app_draw_text, cugl_app_text_width;
 * cugl/app_draw.h): a font from a Debian package (fonts-dejavu-core's
 * DejaVu Sans, at the path the build found, or CUGL_APP_FONT's), read by
 * FreeType at the first text of a context. Each size asked for gets an
 * atlas: the printable ASCII characters rendered by FreeType (8-bit
 * coverage, hinted) into one R8 texture, with their metrics. A text is
 * quads at whole pixels, one a character, each reading its glyph's texels
 * one for one: what FreeType rendered, blended over the picture in the
 * text's colour.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ft2build.h>
#include FT_FREETYPE_H

#include "app_internal.h"
#include "cugl/app_draw.h"

enum {
    FIRST = 32, /* ' ' */
    LAST = 126, /* '~': each other byte is drawn as '?' */
    GLYPHS = LAST - FIRST + 1,
    ATLAS_W = 1024,
    SIZES = 8,       /* atlases a context keeps, the least used replaced */
    MAX_PIXELS = 256 /* the largest size */
};

typedef struct glyph {
    int x, y, w, h;    /* in the atlas */
    int left, top;     /* the bitmap's offset from the pen, top up from the baseline */
    int advance;       /* pixels */
} glyph;

typedef struct atlas {
    int pixels; /* 0: free */
    GLuint texture;
    int height;
    long used; /* the draw count when last used */
    glyph glyphs[GLYPHS];
} atlas;

/* A context's text objects, kept with its drawers' (app_internal.h's
 * cugl__app_drawer_objects, which frees them through text_free). */
struct cugl__app_text {
    FT_Library ft;
    FT_Face face;
    GLuint program, vao, quads;
    atlas atlases[SIZES];
    long draws;
};

static void text_free(struct cugl__app_text *t)
{
    if (!t)
        return;
    for (int i = 0; i < SIZES; i++)
        if (t->atlases[i].texture)
            glDeleteTextures(1, &t->atlases[i].texture);
    if (t->program)
        glDeleteProgram(t->program);
    if (t->vao)
        glDeleteVertexArrays(1, &t->vao);
    if (t->quads)
        glDeleteBuffers(1, &t->quads);
    if (t->face)
        FT_Done_Face(t->face);
    if (t->ft)
        FT_Done_FreeType(t->ft);
    free(t);
}

/* The font's path: CUGL_APP_FONT where set, else the build's. */
static const char *font_path(void)
{
    const char *env = getenv("CUGL_APP_FONT");
    return env && *env ? env : CUGL_APP_FONT_PATH;
}

static const char *vertex_src =
    "#version 450 core\n"
    "// A text's quads: (x, y) in clip space and (u, v) in the atlas's texels.\n"
    "layout(std430, binding = 0) readonly buffer Quads { vec4 q[]; };\n"
    "out vec2 uv;\n"
    "void main() { vec4 c = q[gl_VertexID]; gl_Position = vec4(c.xy, 0.0, 1.0); uv = c.zw; }\n";
static const char *fragment_src =
    "#version 450 core\n"
    "// The glyph's coverage, texel for pixel, as the text colour's alpha.\n"
    "in vec2 uv;\n"
    "layout(location = 0) uniform vec4 rgba;\n"
    "layout(binding = 0) uniform sampler2D atlas;\n"
    "out vec4 colour;\n"
    "void main() {\n"
    "    float a = texelFetch(atlas, ivec2(floor(uv)), 0).r;\n"
    "    colour = vec4(rgba.rgb, rgba.a * a);\n"
    "}\n";

/* The context's text objects, the font opened and the program made at
 * the first call. */
static cugl_status text_objects(struct cugl__app_text **out, cugl_app_context *ctx,
                                const char *who)
{
    cugl__app_drawer_objects *o = NULL;
    CUGL__TRY(cugl__app_drawer_objects_of(&o, ctx, who));
    if (o->text) {
        *out = o->text;
        return CUGL_OK;
    }
    struct cugl__app_text *t = calloc(1, sizeof *t);
    if (!t)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for the text objects");
    const char *path = font_path();
    FT_Error e = FT_Init_FreeType(&t->ft);
    if (!e)
        e = FT_New_Face(t->ft, path, 0, &t->face);
    if (e) {
        text_free(t);
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "FreeType cannot open the font %s (error %d): Debian's "
                          "fonts-dejavu-core has it, or set CUGL_APP_FONT to a TrueType font",
                          path, (int)e);
    }
    cugl_status st = cugl_app_program(&t->program, "text", vertex_src, fragment_src);
    if (st != CUGL_OK) {
        text_free(t);
        return cugl__as_own(st, who);
    }
    glCreateVertexArrays(1, &t->vao);
    glCreateBuffers(1, &t->quads);
    o->text = *out = t;
    o->text_free = text_free;
    return cugl_app_check_gl(who, "making the text's program");
}

/* Each glyph rendered into a new atlas for `pixels`; false where FreeType
 * could not render one (the message left). */
static cugl_status make_atlas(struct cugl__app_text *t, atlas *a, int pixels, const char *who)
{
    FT_Error e = FT_Set_Pixel_Sizes(t->face, 0, (FT_UInt)pixels);
    if (e)
        return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                          "FreeType cannot size the font to %d pixels (error %d)", pixels, (int)e);
    /* Rows of glyphs: place each by its rendered size (a pixel apart),
     * then render them again into the image. */
    int x = 0, y = 0, row = 0;
    for (int c = FIRST; c <= LAST; c++) {
        if ((e = FT_Load_Char(t->face, (FT_ULong)c, FT_LOAD_RENDER)))
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                              "FreeType cannot render '%c' (error %d)", c, (int)e);
        int w = (int)t->face->glyph->bitmap.width + 1, h = (int)t->face->glyph->bitmap.rows + 1;
        if (x + w > ATLAS_W) {
            x = 0;
            y += row;
            row = 0;
        }
        a->glyphs[c - FIRST] = (glyph){.x = x, .y = y};
        x += w;
        row = h > row ? h : row;
    }
    a->height = y + row;
    uint8_t *image = calloc((size_t)ATLAS_W * (size_t)a->height, 1);
    if (!image)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "no memory for a text atlas");
    for (int c = FIRST; c <= LAST; c++) {
        glyph *g = &a->glyphs[c - FIRST];
        if ((e = FT_Load_Char(t->face, (FT_ULong)c, FT_LOAD_RENDER))) {
            free(image);
            return cugl__fail(CUGL_ERROR_NOT_SUPPORTED, who,
                              "FreeType cannot render '%c' (error %d)", c, (int)e);
        }
        FT_GlyphSlot s = t->face->glyph;
        /* The same size as placed (FreeType renders a glyph the same way
         * twice); held to it all the same. */
        int room_w = (c < LAST && g[1].y == g->y ? g[1].x : ATLAS_W) - g->x;
        g->w = (int)s->bitmap.width < room_w ? (int)s->bitmap.width : room_w;
        g->h = (int)s->bitmap.rows < a->height - g->y ? (int)s->bitmap.rows : a->height - g->y;
        g->left = s->bitmap_left;
        g->top = s->bitmap_top;
        g->advance = (int)(s->advance.x / 64);
        for (int r = 0; r < g->h; r++)
            memcpy(image + (size_t)(g->y + r) * ATLAS_W + (size_t)g->x,
                   s->bitmap.buffer + (ptrdiff_t)r * s->bitmap.pitch, (size_t)g->w);
    }
    glCreateTextures(GL_TEXTURE_2D, 1, &a->texture);
    glTextureStorage2D(a->texture, 1, GL_R8, ATLAS_W, a->height);
    cugl__gl_pixels saved;
    cugl__gl_pixels_set(&saved, false, 0, 1, 0, 0);
    glTextureSubImage2D(a->texture, 0, 0, 0, ATLAS_W, a->height, GL_RED, GL_UNSIGNED_BYTE,
                        image);
    cugl__gl_pixels_restore(&saved);
    free(image);
    a->pixels = pixels;
    return cugl_app_check_gl(who, "making a text atlas");
}

/* The atlas of `pixels`, made where there is none (in the slot used least
 * long ago). */
static cugl_status atlas_of(atlas **out, struct cugl__app_text *t, int pixels, const char *who)
{
    atlas *oldest = &t->atlases[0];
    t->draws++;
    for (int i = 0; i < SIZES; i++) {
        atlas *a = &t->atlases[i];
        if (a->pixels == pixels) {
            a->used = t->draws;
            *out = a;
            return CUGL_OK;
        }
        if (a->used < oldest->used)
            oldest = a;
    }
    if (oldest->texture)
        glDeleteTextures(1, &oldest->texture);
    memset(oldest, 0, sizeof *oldest);
    CUGL__TRY(make_atlas(t, oldest, pixels, who));
    oldest->used = t->draws;
    *out = oldest;
    return CUGL_OK;
}

static const glyph *glyph_of(const atlas *a, unsigned char c)
{
    return &a->glyphs[(c >= FIRST && c <= LAST ? c : '?') - FIRST];
}

/* The arguments every text call checks. */
static cugl_status check(cugl_app_context *ctx, const char *text, float pixels, const char *who)
{
    if (!ctx || !text)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s is NULL", !ctx ? "ctx" : "text");
    if (!(pixels >= 4 && pixels <= MAX_PIXELS))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "a text %g pixels high: from 4 to %d", (double)pixels, MAX_PIXELS);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_text_width(cugl_app_context *ctx, const char *text, float pixels,
                                         int *width)
{
    if (!width)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "width is NULL");
    *width = 0;
    CUGL__TRY(check(ctx, text, pixels, __func__));
    struct cugl__app_text *t = NULL;
    atlas *a = NULL;
    CUGL__TRY(text_objects(&t, ctx, __func__));
    CUGL__TRY(atlas_of(&a, t, (int)lroundf(pixels), __func__));
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        *width += glyph_of(a, *c)->advance;
    return CUGL_OK;
}

/* The quads of `text` from pen (x, y) in a viewport of vw x vh: 6
 * vertices of (clip x, clip y, texel u, texel v) a drawn glyph, malloc'ed
 * into *out; their vertex count. */
static size_t quads(float **out, const atlas *a, const char *text, int x, int y, int vw, int vh)
{
    size_t n = strlen(text);
    float *q = *out = malloc(n * 6 * 4 * sizeof(float) + 1);
    if (!q)
        return 0;
    size_t v = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        const glyph *g = glyph_of(a, *c);
        if (g->w > 0 && g->h > 0) {
            float x0 = (float)(x + g->left), y1 = (float)(y + g->top);
            float x1 = x0 + (float)g->w, y0 = y1 - (float)g->h;
            /* Corner (px, py) of the quad: clip space, and the texel whose
             * row g->y is the glyph's top. */
            const float corner[6][4] = {
                {x0, y0, (float)g->x, (float)(g->y + g->h)},
                {x1, y0, (float)(g->x + g->w), (float)(g->y + g->h)},
                {x0, y1, (float)g->x, (float)g->y},
                {x0, y1, (float)g->x, (float)g->y},
                {x1, y0, (float)(g->x + g->w), (float)(g->y + g->h)},
                {x1, y1, (float)(g->x + g->w), (float)g->y},
            };
            for (int k = 0; k < 6; k++, v++) {
                q[4 * v] = corner[k][0] / (float)vw * 2 - 1;
                q[4 * v + 1] = corner[k][1] / (float)vh * 2 - 1;
                q[4 * v + 2] = corner[k][2];
                q[4 * v + 3] = corner[k][3];
            }
        }
        x += g->advance;
    }
    return v;
}

/* The GL state the draw changes, to be put back. */
typedef struct saved_state {
    GLint program, vao, texture, ssbo, src_rgb, dst_rgb, src_a, dst_a;
    GLboolean blend, depth_test;
} saved_state;

static void save(saved_state *s)
{
    glGetIntegerv(GL_CURRENT_PROGRAM, &s->program);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &s->vao);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &s->texture);
    glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, 0, &s->ssbo);
    glGetIntegerv(GL_BLEND_SRC_RGB, &s->src_rgb);
    glGetIntegerv(GL_BLEND_DST_RGB, &s->dst_rgb);
    glGetIntegerv(GL_BLEND_SRC_ALPHA, &s->src_a);
    glGetIntegerv(GL_BLEND_DST_ALPHA, &s->dst_a);
    s->blend = glIsEnabled(GL_BLEND);
    s->depth_test = glIsEnabled(GL_DEPTH_TEST);
}

static void restore(const saved_state *s)
{
    glUseProgram((GLuint)s->program);
    glBindVertexArray((GLuint)s->vao);
    glBindTextureUnit(0, (GLuint)s->texture);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, (GLuint)s->ssbo);
    glBlendFuncSeparate((GLenum)s->src_rgb, (GLenum)s->dst_rgb, (GLenum)s->src_a,
                        (GLenum)s->dst_a);
    (s->blend ? glEnable : glDisable)(GL_BLEND);
    (s->depth_test ? glEnable : glDisable)(GL_DEPTH_TEST);
}

CUGL_API cugl_status cugl_app_draw_text(cugl_app_context *ctx, const char *text, float x,
                                        float y, float pixels, const float rgba[4])
{
    CUGL__TRY(check(ctx, text, pixels, __func__));
    CUGL__TRY(cugl__app_check_rgba(rgba, __func__));
    if (!(fabsf(x) <= 1e6f && fabsf(y) <= 1e6f))
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "the text at (%g, %g): finite, within a million pixels", (double)x,
                          (double)y);
    struct cugl__app_text *t = NULL;
    atlas *a = NULL;
    CUGL__TRY(text_objects(&t, ctx, __func__));
    CUGL__TRY(atlas_of(&a, t, (int)lroundf(pixels), __func__));
    GLint vp[4];
    glGetIntegerv(GL_VIEWPORT, vp);
    float *q = NULL;
    size_t n = quads(&q, a, text, (int)lroundf(x), (int)lroundf(y), vp[2], vp[3]);
    if (!q)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "no memory for the text's quads");
    if (n == 0) {
        free(q);
        return CUGL_OK;
    }
    saved_state s;
    save(&s);
    cugl_app_drain_gl_errors();
    glNamedBufferData(t->quads, (GLsizeiptr)(n * 4 * sizeof(float)), q, GL_STREAM_DRAW);
    free(q);
    glUseProgram(t->program);
    glBindVertexArray(t->vao);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, t->quads);
    glBindTextureUnit(0, a->texture);
    glUniform4fv(0, 1, rgba);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glDrawArrays(GL_TRIANGLES, 0, (GLsizei)n);
    restore(&s);
    return cugl_app_check_gl(__func__, "drawing the text");
}
