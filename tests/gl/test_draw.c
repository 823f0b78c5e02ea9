/*
 * test_draw.c - the drawers (cugl/app_draw.h) where there is no CUDA: a
 * context on no CUDA device (Mesa here) gives targets of the host path
 * that start with host memory, and the mesh drawn from them is read back
 * pixel by pixel against what the colour map's formula says: each
 * triangle in its colour, indices, the depth test, shading, NaN, lines,
 * a line strip and points, the colour maps' entries, the GL state put
 * back, and every refusal named.
 */
#include <float.h>
#include <math.h>

#include "gl_test.h"

#include <ft2build.h>
#include FT_FREETYPE_H

#include "cugl/app_draw.h"

static const float clear_rgba[4] = {0, 0, 1, 1}; /* blue: no map entry, no white */

/* A buffer target that starts with `size` bytes of `data`. */
static cugl_app_target *buffer(const void *data, size_t size)
{
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                  .kind = CUGL_APP_TARGET_BUFFER,
                                                  .size = size,
                                                  .initial = data}));
    return t;
}

/* Cleared (colour and depth), then the mesh drawn: the framebuffer, rows
 * top to bottom. */
static uint8_t *drawn(const cugl_app_mesh_desc *m, size_t vertices, size_t triangles)
{
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glClearColor(clear_rgba[0], clear_rgba[1], clear_rgba[2], clear_rgba[3]);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    assert_ok(cugl_app_draw_mesh(m, vertices, triangles, NULL));
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    return px;
}

/* The pixel at clip-space (x, y). */
static const uint8_t *at(const uint8_t *px, float x, float y)
{
    int col = (int)((x * 0.5f + 0.5f) * W), row = (int)((y * 0.5f + 0.5f) * H);
    return px + ((size_t)(H - 1 - row) * W + (size_t)col) * 4;
}

static void expect_rgb(const uint8_t *got, const uint8_t *want, const char *what)
{
    if (got[0] != want[0] || got[1] != want[1] || got[2] != want[2])
        fail_msg("%s: %u %u %u, want %u %u %u", what, got[0], got[1], got[2], want[0], want[1],
                 want[2]);
}

static uint8_t table[1024];

/* The colour map's entry for `v` in 0 .. 1, as the header's formula says. */
static const uint8_t *entry(float v)
{
    float t = v < 0 ? 0 : v > 1 ? 1 : v;
    return table + 4 * (int)(t * 255.0f + 0.5f);
}

static void colour_maps_have_their_entries(void **state)
{
    (void)state;
    uint8_t grey[1024];
    assert_ok(cugl_app_colormap_table(CUGL_APP_COLORMAP_GREY, grey));
    for (int i = 0; i < 256; i++)
        if (grey[4 * i] != i || grey[4 * i + 1] != i || grey[4 * i + 2] != i ||
            grey[4 * i + 3] != 255)
            fail_msg("grey entry %d is %u %u %u %u", i, grey[4 * i], grey[4 * i + 1],
                     grey[4 * i + 2], grey[4 * i + 3]);
    assert_ok(cugl_app_colormap_table(CUGL_APP_COLORMAP_CUGL, table));
    /* Its stops: 0 black, 0.2 (entry 51) 30 20 110, 1 white; brightness rising. */
    static const uint8_t black[3] = {0, 0, 0}, stop[3] = {30, 20, 110}, white[3] = {255, 255, 255};
    expect_rgb(table, black, "entry 0");
    expect_rgb(table + 4 * 51, stop, "entry 51");
    expect_rgb(table + 4 * 255, white, "entry 255");
    for (int i = 1; i < 256; i++) {
        int a = table[4 * i - 4] + table[4 * i - 3] + table[4 * i - 2];
        int b = table[4 * i] + table[4 * i + 1] + table[4 * i + 2];
        if (b < a)
            fail_msg("entry %d (%d) is darker than entry %d (%d)", i, b, i - 1, a);
    }
    assert_status(cugl_app_colormap_table(CUGL_APP_COLORMAP_CUGL, NULL),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_colormap_table: rgba is NULL");
    assert_status(cugl_app_colormap_table((cugl_app_colormap)7, grey),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "colour map 7"));
}

/* Two triangles, left and right, scalars 0.5 and 1 (unlit): each pixel
 * inside is the map's entry; outside, the clear colour. */
static void triangles_take_their_colours(void **state)
{
    (void)state;
    static const float p[] = {-0.9f, -0.9f, 0, -0.1f, -0.9f, 0, -0.9f, 0.9f, 0,
                              0.1f,  -0.9f, 0, 0.9f,  -0.9f, 0, 0.1f,  0.9f, 0};
    static const float s[] = {0.5f, 0.5f, 0.5f, 1, 1, 1};
    cugl_app_target *pos = buffer(p, sizeof p), *sc = buffer(s, sizeof s);
    cugl_app_mesh_desc m = {.positions = pos, .scalars = sc, .shading = CUGL_APP_SHADING_NONE};
    uint8_t *px = drawn(&m, 6, 2);
    expect_rgb(at(px, -0.7f, -0.7f), entry(0.5f), "inside the left triangle");
    expect_rgb(at(px, 0.3f, -0.7f), entry(1.0f), "inside the right triangle");
    static const uint8_t blue[3] = {0, 0, 255};
    expect_rgb(at(px, 0.7f, 0.7f), blue, "outside both");
    free(px);
    /* A range of its own: 0.5 is now the last entry, 1 past it. */
    m.vmin = -1;
    m.vmax = 0.5f;
    px = drawn(&m, 6, 2);
    expect_rgb(at(px, -0.7f, -0.7f), entry(1.0f), "0.5 at the top of -1 .. 0.5");
    free(px);
    /* Without scalars: one colour. */
    m = (cugl_app_mesh_desc){
        .positions = pos, .rgba = {1, 0, 0, 1}, .shading = CUGL_APP_SHADING_NONE};
    px = drawn(&m, 6, 2);
    static const uint8_t red[3] = {255, 0, 0};
    expect_rgb(at(px, 0.3f, -0.7f), red, "the mesh's own colour");
    free(px);
    cugl_app_target_destroy(sc);
    cugl_app_target_destroy(pos);
}

/* A quad of 4 vertices by indices; a triangle with an index past the
 * vertices is not drawn at all. */
static void indices_pick_vertices(void **state)
{
    (void)state;
    static const float p[] = {-0.8f, -0.8f, 0, 0.8f, -0.8f, 0, -0.8f, 0.8f, 0, 0.8f, 0.8f, 0};
    static const float s[] = {1, 1, 1, 1};
    static const uint32_t quad[] = {0, 1, 2, 2, 1, 3}, bad[] = {0, 1, 7};
    cugl_app_target *pos = buffer(p, sizeof p), *sc = buffer(s, sizeof s);
    cugl_app_target *iq = buffer(quad, sizeof quad), *ib = buffer(bad, sizeof bad);
    cugl_app_mesh_desc m = {
        .positions = pos, .scalars = sc, .indices = iq, .shading = CUGL_APP_SHADING_NONE};
    uint8_t *px = drawn(&m, 4, 2);
    static const uint8_t white[3] = {255, 255, 255}, blue[3] = {0, 0, 255};
    expect_rgb(at(px, -0.6f, 0.6f), white, "the quad's first triangle");
    expect_rgb(at(px, 0.6f, -0.6f), white, "its second");
    expect_rgb(at(px, 0.9f, 0.9f), blue, "outside the quad");
    free(px);
    m.indices = ib;
    px = drawn(&m, 4, 1);
    for (int i = 0; i < W * H; i++)
        if (px[4 * i] != 0 || px[4 * i + 1] != 0 || px[4 * i + 2] != 255)
            fail_msg("a triangle with vertex 7 of 4 drew pixel %d", i);
    free(px);
    /* More triangles than the indices hold: refused. */
    assert_status(cugl_app_draw_mesh(&m, 4, 2, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "mesh->indices is too small: 24 bytes wanted"));
    cugl_app_target_destroy(ib);
    cugl_app_target_destroy(iq);
    cugl_app_target_destroy(sc);
    cugl_app_target_destroy(pos);
}

/* Two triangles over each other: the nearer shows, whichever comes first. */
static void depth_decides_not_order(void **state)
{
    (void)state;
    static const float near_first[] = {-0.9f, -0.9f, -0.5f, 0.9f, -0.9f, -0.5f, 0, 0.9f, -0.5f,
                                       -0.9f, -0.9f, 0.5f,  0.9f, -0.9f, 0.5f,  0, 0.9f, 0.5f};
    static const float far_first[] = {-0.9f, -0.9f, 0.5f,  0.9f, -0.9f, 0.5f,  0, 0.9f, 0.5f,
                                      -0.9f, -0.9f, -0.5f, 0.9f, -0.9f, -0.5f, 0, 0.9f, -0.5f};
    static const float s_near_first[] = {0.25f, 0.25f, 0.25f, 1, 1, 1};
    static const float s_far_first[] = {1, 1, 1, 0.25f, 0.25f, 0.25f};
    const float *ps[2] = {near_first, far_first}, *ss[2] = {s_near_first, s_far_first};
    for (int k = 0; k < 2; k++) {
        cugl_app_target *pos = buffer(ps[k], sizeof near_first);
        cugl_app_target *sc = buffer(ss[k], sizeof s_near_first);
        cugl_app_mesh_desc m = {
            .positions = pos, .scalars = sc, .shading = CUGL_APP_SHADING_NONE};
        uint8_t *px = drawn(&m, 6, 2);
        expect_rgb(at(px, 0, -0.5f), entry(0.25f), k ? "the nearer, drawn second"
                                                      : "the nearer, drawn first");
        free(px);
        cugl_app_target_destroy(sc);
        cugl_app_target_destroy(pos);
    }
}

/* Shaded, a triangle facing the eye keeps its colour; one turned 45
 * degrees about the vertical is darker: 0.35 + 0.65 cos 45 of it. */
static void shading_follows_the_face(void **state)
{
    (void)state;
    static const float facing[] = {-0.9f, -0.9f, 0, 0.9f, -0.9f, 0, -0.9f, 0.9f, 0};
    static const float turned[] = {-0.9f, -0.9f, -0.9f, 0.9f, -0.9f, 0.9f, -0.9f, 0.9f, -0.9f};
    const float *ps[2] = {facing, turned};
    for (int k = 0; k < 2; k++) {
        cugl_app_target *pos = buffer(ps[k], sizeof facing);
        cugl_app_mesh_desc m = {.positions = pos}; /* white, shaded: the defaults */
        uint8_t *px = drawn(&m, 3, 1);
        const uint8_t *c = at(px, -0.5f, -0.5f);
        /* Turned: z grows as x does, so the normal is 45 degrees off the
         * eye's axis (the pixels' aspect moves no angle about y). */
        int want = k ? (int)(255 * (0.35 + 0.65 * sqrt(0.5))) : 255;
        if (abs(c[0] - want) > 3 || c[0] != c[1] || c[1] != c[2])
            fail_msg("%s: %u %u %u, want about %d grey", k ? "turned" : "facing", c[0], c[1],
                     c[2], want);
        free(px);
        cugl_app_target_destroy(pos);
    }
}

/* Along a row from a vertex of scalar 0 to the edge of scalar 1, the
 * colours brighten (the map's brightness rises); a NaN scalar is vmin's. */
static void scalars_run_between_vertices(void **state)
{
    (void)state;
    static const float p[] = {-0.9f, -0.9f, 0, 0.9f, -0.9f, 0, 0.9f, 0.9f, 0};
    static const float s[] = {0, 1, 1}, nan3[] = {NAN, NAN, NAN};
    cugl_app_target *pos = buffer(p, sizeof p), *sc = buffer(s, sizeof s);
    cugl_app_mesh_desc m = {.positions = pos, .scalars = sc, .shading = CUGL_APP_SHADING_NONE};
    uint8_t *px = drawn(&m, 3, 1);
    int last = -1;
    for (float x = -0.5f; x < 0.9f; x += 0.2f) {
        const uint8_t *c = at(px, x, -0.6f);
        int b = c[0] + c[1] + c[2];
        if (b <= last)
            fail_msg("at x %.1f the brightness %d is not above %d", (double)x, b, last);
        last = b;
    }
    free(px);
    cugl_app_target *sn = buffer(nan3, sizeof nan3);
    m.scalars = sn;
    px = drawn(&m, 3, 1);
    expect_rgb(at(px, 0.5f, -0.6f), entry(0), "NaN scalars");
    free(px);
    cugl_app_target_destroy(sn);
    cugl_app_target_destroy(sc);
    cugl_app_target_destroy(pos);
}

/* Clip space of pixel (x, y)'s centre, y from the bottom. */
static float cx(float x) { return (x + 0.5f) / W * 2 - 1; }
static float cy(float y) { return (y + 0.5f) / H * 2 - 1; }

/* The framebuffer's pixel (x, y), y from the bottom. */
static const uint8_t *pixel(const uint8_t *px, int x, int y)
{
    return px + ((size_t)(H - 1 - y) * W + (size_t)x) * 4;
}

static int lit_count(const uint8_t *px)
{
    int n = 0;
    for (int i = 0; i < W * H; i++)
        n += px[4 * i] != 0 || px[4 * i + 1] != 0 || px[4 * i + 2] != 255;
    return n;
}

/* Cleared, then `draw` called: the framebuffer, rows top to bottom. */
static uint8_t *drawn_by(cugl_status (*draw)(const cugl_app_mesh_desc *, size_t, const void *),
                         const cugl_app_mesh_desc *m, size_t vertices, const void *arg)
{
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glClearColor(clear_rgba[0], clear_rgba[1], clear_rgba[2], clear_rgba[3]);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    assert_ok(draw(m, vertices, arg));
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    return px;
}

static cugl_status lines_of(const cugl_app_mesh_desc *m, size_t vertices, const void *arg)
{
    return cugl_app_draw_lines(m, vertices, *(const size_t *)arg, NULL);
}

static cugl_status strip_of(const cugl_app_mesh_desc *m, size_t vertices, const void *arg)
{
    (void)arg;
    return cugl_app_draw_line_strip(m, vertices, NULL);
}

static cugl_status points_of(const cugl_app_mesh_desc *m, size_t vertices, const void *arg)
{
    return cugl_app_draw_points(m, vertices, *(const float *)arg, NULL);
}

/* A segment along row 24 in the map's last entry: that row lit from
 * column 10 to 50, the rows two off not; by indices the same, and a
 * segment with an index past the vertices not at all. */
static void lines_between_vertices(void **state)
{
    (void)state;
    const float p[] = {cx(5), cy(24), 0, cx(58), cy(24), 0};
    static const float s[] = {1, 1};
    static const uint32_t pair[] = {0, 1}, bad[] = {0, 5};
    cugl_app_target *pos = buffer(p, sizeof p), *sc = buffer(s, sizeof s);
    cugl_app_target *ip = buffer(pair, sizeof pair), *ib = buffer(bad, sizeof bad);
    cugl_app_mesh_desc m = {.positions = pos, .scalars = sc};
    static const uint8_t white[3] = {255, 255, 255}, blue[3] = {0, 0, 255};
    const size_t one = 1;
    for (int k = 0; k < 2; k++) {
        m.indices = k ? ip : NULL;
        uint8_t *px = drawn_by(lines_of, &m, 2, &one);
        for (int x = 10; x <= 50; x++) {
            expect_rgb(pixel(px, x, 24), white, k ? "the segment by indices" : "the segment");
            expect_rgb(pixel(px, x, 22), blue, "two rows below");
            expect_rgb(pixel(px, x, 26), blue, "two rows above");
        }
        free(px);
    }
    m.indices = ib;
    uint8_t *px = drawn_by(lines_of, &m, 2, &one);
    assert_int_equal(lit_count(px), 0);
    free(px);
    const size_t two = 2;
    m.indices = NULL;
    assert_status(cugl_app_draw_lines(&m, 2, two, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(),
                           "cugl_app_draw_lines: 2 segments without indices need 4 vertices"));
    cugl_app_target_destroy(ib);
    cugl_app_target_destroy(ip);
    cugl_app_target_destroy(sc);
    cugl_app_target_destroy(pos);
}

/* An L through three vertices, in one colour: both legs lit, the corner's
 * inside not; a strip takes no indices. */
static void a_strip_through_its_vertices(void **state)
{
    (void)state;
    const float p[] = {cx(5), cy(10), 0, cx(40), cy(10), 0, cx(40), cy(40), 0};
    static const uint32_t idx[] = {0, 1, 2};
    cugl_app_target *pos = buffer(p, sizeof p), *ix = buffer(idx, sizeof idx);
    cugl_app_mesh_desc m = {.positions = pos, .rgba = {1, 0, 0, 1}};
    uint8_t *px = drawn_by(strip_of, &m, 3, NULL);
    static const uint8_t red[3] = {255, 0, 0}, blue[3] = {0, 0, 255};
    expect_rgb(pixel(px, 20, 10), red, "the first leg");
    expect_rgb(pixel(px, 40, 25), red, "the second leg");
    expect_rgb(pixel(px, 20, 25), blue, "inside the corner");
    free(px);
    m.indices = ix;
    assert_status(cugl_app_draw_line_strip(&m, 3, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "strip vertices take no indices"));
    cugl_app_target_destroy(ix);
    cugl_app_target_destroy(pos);
}

/* Two points, 3 pixels a side, each its scalar's colour: 18 pixels lit;
 * points take no indices, and a size of 0 is refused. */
static void points_in_their_colours(void **state)
{
    (void)state;
    const float p[] = {cx(10), cy(10), 0, cx(30), cy(20), 0};
    static const float s[] = {0.5f, 1};
    static const uint32_t idx[] = {0, 1};
    cugl_app_target *pos = buffer(p, sizeof p), *sc = buffer(s, sizeof s);
    cugl_app_target *ix = buffer(idx, sizeof idx);
    cugl_app_mesh_desc m = {.positions = pos, .scalars = sc};
    const float size = 3;
    uint8_t *px = drawn_by(points_of, &m, 2, &size);
    assert_int_equal(lit_count(px), 18);
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++) {
            expect_rgb(pixel(px, 10 + dx, 10 + dy), entry(0.5f), "the first point");
            expect_rgb(pixel(px, 30 + dx, 20 + dy), entry(1.0f), "the second point");
        }
    free(px);
    m.indices = ix;
    assert_status(cugl_app_draw_points(&m, 2, 3, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "points take no indices"));
    m.indices = NULL;
    assert_status(cugl_app_draw_points(&m, 2, 0, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "point size 0"));
    cugl_app_target_destroy(ix);
    cugl_app_target_destroy(sc);
    cugl_app_target_destroy(pos);
}

/* Cleared to black: the framebuffer's red channel after `draw`, rows from
 * the bottom. */
static void red_after(void (*draw)(void *), void *arg, uint8_t *red)
{
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(ctx));
    glViewport(0, 0, W, H);
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    draw(arg);
    uint8_t *px = malloc((size_t)W * H * 4);
    assert_ok(cugl_app_read_pixels(px, (size_t)W * H * 4, ctx));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            red[y * W + x] = pixel(px, x, y)[0];
    free(px);
}

static void draw_hi(void *arg)
{
    static const float white[4] = {1, 1, 1, 1};
    assert_ok(cugl_app_draw_text(ctx, (const char *)arg, 5, 12, 16, white));
}

/* White text over black: each pixel the coverage FreeType renders for the
 * glyph there (blended over the glyphs before it as GL blends), from the
 * same font at the same size; its width the advances' sum; a byte past
 * ASCII drawn as '?'. */
static void text_is_freetype_s_glyphs(void **state)
{
    (void)state;
    FT_Library ft;
    FT_Face face;
    assert_int_equal(FT_Init_FreeType(&ft), 0);
    assert_int_equal(FT_New_Face(ft, CUGL_TEST_FONT, 0, &face), 0);
    assert_int_equal(FT_Set_Pixel_Sizes(face, 0, 16), 0);
    const char *texts[2] = {"Hi, T!", "\xc3\xa9?"};
    for (int k = 0; k < 2; k++) {
        double want[W * H] = {0};
        int pen = 5, advances = 0;
        for (const unsigned char *c = (const unsigned char *)texts[k]; *c; c++) {
            assert_int_equal(FT_Load_Char(face, *c < 127 ? *c : '?', FT_LOAD_RENDER), 0);
            FT_GlyphSlot s = face->glyph;
            for (int r = 0; r < (int)s->bitmap.rows; r++)
                for (int col = 0; col < (int)s->bitmap.width; col++) {
                    int x = pen + s->bitmap_left + col, y = 12 + s->bitmap_top - 1 - r;
                    double a = s->bitmap.buffer[r * s->bitmap.pitch + col] / 255.0;
                    if (x >= 0 && x < W && y >= 0 && y < H)
                        want[y * W + x] = a * 255 + want[y * W + x] * (1 - a);
                }
            pen += (int)(s->advance.x / 64);
            advances += (int)(s->advance.x / 64);
        }
        uint8_t got[W * H];
        red_after(draw_hi, (void *)texts[k], got);
        int lit = 0;
        for (int i = 0; i < W * H; i++) {
            lit += got[i] > 0;
            if (fabs(got[i] - want[i]) > 1.0)
                fail_msg("\"%s\": pixel (%d, %d) is %u, FreeType's %.1f", texts[k], i % W, i / W,
                         got[i], want[i]);
        }
        assert_true(lit > 20); /* text, not nothing */
        int width = 0;
        assert_ok(cugl_app_text_width(ctx, texts[k], 16, &width));
        assert_int_equal(width, advances);
    }
    FT_Done_Face(face);
    FT_Done_FreeType(ft);
}

static void draw_bar(void *arg)
{
    assert_ok(cugl_app_draw_colorbar(ctx, (const cugl_app_colorbar_desc *)arg));
}

/* A bar of 8 x 40 at (4, 4): row k the map's entry for (k + 0.5) / 40; a
 * tick at rows 0, 20 and 39 in white; each label drawn right of it. */
static void colorbar_rows_ticks_and_labels(void **state)
{
    (void)state;
    const cugl_app_colorbar_desc bar = {.vmin = -1, .vmax = 1, .x = 4, .y = 4, .width = 8,
                                        .height = 40, .ticks = 3, .text_pixels = 10};
    uint8_t red[W * H];
    red_after(draw_bar, (void *)&bar, red);
    for (int k = 0; k < 40; k++) {
        uint8_t want = entry((k + 0.5f) / 40)[0];
        if (red[(4 + k) * W + 8] != want)
            fail_msg("bar row %d: red %u, want %u", k, red[(4 + k) * W + 8], want);
    }
    const int tick_rows[3] = {0, 20, 39};
    for (int t = 0; t < 3; t++) {
        for (int x = 13; x < 17; x++)
            assert_int_equal(red[(4 + tick_rows[t]) * W + x], 255);
        /* The label: lit pixels right of the tick, within 5 rows of it. */
        int lit = 0;
        for (int y = 4 + tick_rows[t] - 5; y <= 4 + tick_rows[t] + 5; y++)
            for (int x = 20; x < W; x++)
                lit += y >= 0 && y < H && red[y * W + x] > 128;
        if (lit < 4)
            fail_msg("no label by tick %d (%d pixels)", t, lit);
    }
    assert_int_equal(red[(4 + 10) * W + 14], 0); /* between the ticks */
    /* Refusals. */
    const struct {
        cugl_app_colorbar_desc b;
        const char *says;
    } cases[] = {
        {{.colormap = (cugl_app_colormap)9}, "colour map 9 is none"},
        {{.vmin = 2, .vmax = 1}, "the range 2 .. 1"},
        {{.ticks = 1}, "with 1 ticks"},
        {{.height = 1}, "a bar 16 x 1 pixels"},
        {{.rgba = {0, 0, 0, 2}}, "rgba[3] is 2"},
        {{.text_pixels = 500}, "a text 500 pixels high"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_status st = cugl_app_draw_colorbar(ctx, &cases[i].b);
        if (st != CUGL_ERROR_INVALID_ARGUMENT || !strstr(cugl_last_error(), cases[i].says))
            fail_msg("case %zu: status %d, \"%s\"; want \"%s\"", i, (int)st, cugl_last_error(),
                     cases[i].says);
    }
    assert_status(cugl_app_draw_colorbar(ctx, NULL), CUGL_ERROR_INVALID_ARGUMENT);
}

/* Text's refusals, and a font that is not there: named. */
static void text_refusals(void **state)
{
    (void)state;
    static const float white[4] = {1, 1, 1, 1}, bad[4] = {1, 1, 1.5f, 1};
    int width = 7;
    assert_status(cugl_app_draw_text(NULL, "a", 0, 0, 16, white), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_draw_text: ctx is NULL");
    assert_status(cugl_app_draw_text(ctx, NULL, 0, 0, 16, white), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_draw_text(ctx, "a", 0, 0, 3, white), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "a text 3 pixels high: from 4 to 256"));
    assert_status(cugl_app_draw_text(ctx, "a", 0, 0, NAN, white), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_draw_text(ctx, "a", INFINITY, 0, 16, white),
                  CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_draw_text(ctx, "a", 0, 0, 16, bad), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "rgba[2] is 1.5"));
    assert_status(cugl_app_text_width(ctx, "a", 16, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_text_width(ctx, "a", 300, &width), CUGL_ERROR_INVALID_ARGUMENT);
    assert_int_equal(width, 0);
    assert_ok(cugl_app_draw_text(ctx, "", 0, 0, 16, white)); /* nothing to draw */
    /* A context whose font is not there (read at its first text). */
    setenv("CUGL_APP_FONT", "/nonexistent/font.ttf", 1);
    cugl_app_context *other = app_test_headless(8, 8);
    assert_status(cugl_app_draw_text(other, "a", 0, 0, 16, white), CUGL_ERROR_NOT_SUPPORTED);
    assert_non_null(strstr(cugl_last_error(), "/nonexistent/font.ttf"));
    assert_non_null(strstr(cugl_last_error(), "fonts-dejavu-core"));
    unsetenv("CUGL_APP_FONT");
    cugl_app_context_destroy(other);
    make_current();
}

/* Axes over a 256 x 192 context, the box (-0.8, -0.8, 0) .. (0.8, 0.8, 0)
 * in clip space: the x axis along row 19, the y axis down column 25, the
 * values' labels below and left of them, the names beyond the ends;
 * nothing for a label behind the eye; refusals. */
static void axes_and_labels(void **state)
{
    (void)state;
    enum { AW = 256, AH = 192 };
    cugl_app_context *big = app_test_headless(AW, AH);
    glBindFramebuffer(GL_FRAMEBUFFER, cugl_app_context_framebuffer(big));
    glViewport(0, 0, AW, AH);
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    const cugl_app_axes_desc axes = {.min = {-0.8f, -0.8f, 0}, .max = {0.8f, 0.8f, 0}};
    assert_ok(cugl_app_draw_axes(big, &axes, NULL));
    uint8_t *px = malloc((size_t)AW * AH * 4);
    assert_ok(cugl_app_read_pixels(px, (size_t)AW * AH * 4, big));
#define AT(x, y) (px[((size_t)(AH - 1 - (y)) * AW + (size_t)(x)) * 4])
    for (int x = 30; x < 200; x++)
        if (!AT(x, 19) && !AT(x, 20))
            fail_msg("the x axis is not at column %d of row 19", x);
    for (int y = 24; y < 150; y++)
        if (!AT(25, y) && !AT(26, y))
            fail_msg("the y axis is not at row %d of column 25", y);
    /* Labels: lit pixels below the x axis, and left of its start. */
    int below = 0, names = 0;
    for (int y = 0; y < 16; y++)
        for (int x = 30; x < 230; x++)
            below += AT(x, y) > 128;
    for (int y = 10; y < 30; y++) /* "x" beyond x = 0.93: column 247 on */
        for (int x = 244; x < AW; x++)
            names += AT(x, y) > 128;
    assert_true(below > 40);
    assert_true(names > 3);
    /* Above the box's top right, nothing. */
    for (int y = 170; y < AH; y++)
        for (int x = 60; x < 240; x++)
            if (AT(x, y))
                fail_msg("pixel (%d, %d) lit", x, y);
#undef AT
    free(px);
    /* A label behind the eye (w = -1): nothing, and no error. */
    static const float flip[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, -1};
    static const float white[4] = {1, 1, 1, 1}, origin[3] = {0, 0, 0};
    glClear(GL_COLOR_BUFFER_BIT);
    assert_ok(cugl_app_draw_label(big, "hidden", origin, flip, 16, white));
    px = malloc((size_t)AW * AH * 4);
    assert_ok(cugl_app_read_pixels(px, (size_t)AW * AH * 4, big));
    for (size_t i = 0; i < (size_t)AW * AH; i++)
        if (px[4 * i])
            fail_msg("a label behind the eye drew pixel %zu", i);
    free(px);
    const struct {
        cugl_app_axes_desc a;
        const char *says;
    } cases[] = {
        {{.min = {0, 0, 0}, .max = {0, 0, 0}}, "the box is a point"},
        {{.min = {1, 0, 0}, .max = {0, 1, 0}}, "axis 0 from 1 to 0"},
        {{.min = {0, NAN, 0}, .max = {1, 1, 1}}, "axis 1 from nan"},
        {{.max = {1, 1, 1}, .ticks = 1}, "1 ticks an axis: 2 to 64"},
        {{.max = {1, 1, 1}, .text_pixels = 2}, "a text 2 pixels high"},
        {{.max = {1, 1, 1}, .rgba = {2, 0, 0, 1}}, "rgba[0] is 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_status st = cugl_app_draw_axes(big, &cases[i].a, NULL);
        if (st != CUGL_ERROR_INVALID_ARGUMENT || !strstr(cugl_last_error(), cases[i].says) ||
            strncmp(cugl_last_error(), "cugl_app_draw_axes: ", 20) != 0)
            fail_msg("case %zu: status %d, \"%s\"; want \"%s\"", i, (int)st, cugl_last_error(),
                     cases[i].says);
    }
    assert_status(cugl_app_draw_axes(big, NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_status(cugl_app_draw_label(big, "a", NULL, NULL, 16, white),
                  CUGL_ERROR_INVALID_ARGUMENT);
    cugl_app_context_destroy(big);
    make_current();
}

/* A 4 x 4 x 4 volume of R32F from host memory (the host path): 1 where x
 * is 0 or 1, else 0. */
static cugl_app_target *half_volume(void)
{
    static float v[4][4][4];
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++)
                v[z][y][x] = x < 2 ? 1.0f : 0.0f;
    cugl_app_target *t = NULL;
    assert_ok(cugl_app_target_create(&t, ctx, &(cugl_app_target_desc){
                                                  .kind = CUGL_APP_TARGET_VOLUME,
                                                  .format = CUGL_APP_FORMAT_R32F,
                                                  .width = 4,
                                                  .height = 4,
                                                  .depth = 4}));
    cugl_buffer *b = NULL;
    cugl_layout l;
    cugl_view *view = NULL;
    const int64_t shape[4] = {4, 4, 4, 1};
    assert_ok(cugl_buffer_from_handle(&b, (uint64_t)(uintptr_t)v, sizeof v, NULL));
    assert_ok(cugl_layout_init_bytes(&l, 4, shape, NULL, 4));
    assert_ok(cugl_view_from_buffer(&view, b, &l, (cugl_dtype){CUGL_DTYPE_FLOAT, 32, 1}, true));
    cugl_buffer_release(b);
    assert_ok(cugl_app_target_copy_from(t, view, NULL));
    cugl_view_release(view);
    return t;
}

static cugl_status volume_of(const cugl_app_mesh_desc *m, size_t vertices, const void *arg)
{
    (void)m;
    (void)vertices;
    return cugl_app_draw_volume((const cugl_app_volume_desc *)arg, NULL);
}

/* Rays along z through the box -0.5 .. 0.5: where the values are 1 and
 * opaque, the map's last entry; where 0, the picture behind; thin, the
 * picture shows through; outside the box, nothing. Refusals. */
static void a_volume_ray_marched(void **state)
{
    (void)state;
    cugl_app_target *t = half_volume();
    cugl_app_volume_desc v = {.volume = t, .min = {-0.5f, -0.5f, -0.5f},
                              .max = {0.5f, 0.5f, 0.5f}, .density = 1};
    static const uint8_t blue[3] = {0, 0, 255};
    uint8_t *px = drawn_by(volume_of, NULL, 0, &v);
    expect_rgb(at(px, -0.3f, 0), entry(1.0f), "where the values are 1");
    expect_rgb(at(px, 0.3f, 0), blue, "where they are 0");
    expect_rgb(at(px, -0.3f, 0.8f), blue, "above the box");
    free(px);
    v.density = 0.1f;
    v.steps = 8;
    px = drawn_by(volume_of, NULL, 0, &v);
    const uint8_t *c = at(px, -0.3f, 0);
    if (!(c[0] > 20 && c[0] < 240 && c[2] > c[0]))
        fail_msg("a thin volume: %u %u %u, want white over blue, partly", c[0], c[1], c[2]);
    free(px);
    static const float zero[16] = {0};
    assert_status(cugl_app_draw_volume(&v, zero), CUGL_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cugl_last_error(), "the matrix has no inverse"));
    const float p[3] = {0};
    cugl_app_target *buf = buffer(p, sizeof p);
    const struct {
        cugl_app_volume_desc v;
        const char *says;
    } cases[] = {
        {{0}, "volume->volume is NULL"},
        {{.volume = buf}, "is not a volume"},
        {{.volume = t, .min = {0, 0, 0}, .max = {1, 0, 1}}, "the box's axis 1 from 0 to 0"},
        {{.volume = t, .vmin = 1, .vmax = 1}, "the values' range 1 .. 1"},
        {{.volume = t, .density = 2}, "density 2"},
        {{.volume = t, .steps = -1}, "-1 steps"},
        {{.volume = t, .colormap = (cugl_app_colormap)9}, "colour map 9 is none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_status st = cugl_app_draw_volume(&cases[i].v, NULL);
        if (st != CUGL_ERROR_INVALID_ARGUMENT || !strstr(cugl_last_error(), cases[i].says))
            fail_msg("case %zu: status %d, \"%s\"; want \"%s\"", i, (int)st, cugl_last_error(),
                     cases[i].says);
    }
    assert_status(cugl_app_draw_volume(NULL, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    cugl_app_target_destroy(buf);
    cugl_app_target_destroy(t);
}

/* What the draw changes is put back: program, vertex array, storage
 * buffers, texture, depth test. */
static void gl_state_is_put_back(void **state)
{
    (void)state;
    static const float p[] = {-0.9f, -0.9f, 0, 0.9f, -0.9f, 0, -0.9f, 0.9f, 0};
    cugl_app_target *pos = buffer(p, sizeof p);
    GLuint vao = 0, tex = 0, ssbo = 0;
    glCreateVertexArrays(1, &vao);
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glCreateBuffers(1, &ssbo);
    glBindVertexArray(vao);
    glBindTextureUnit(0, tex);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, ssbo);
    glDisable(GL_DEPTH_TEST);
    glDepthFunc(GL_GREATER);
    cugl_app_mesh_desc m = {.positions = pos};
    free(drawn(&m, 3, 1));
    GLint got = 0;
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &got);
    assert_int_equal(got, (GLint)vao);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &got);
    assert_int_equal(got, (GLint)tex);
    glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, 1, &got);
    assert_int_equal(got, (GLint)ssbo);
    glGetIntegerv(GL_CURRENT_PROGRAM, &got);
    assert_int_equal(got, 0);
    glGetIntegerv(GL_DEPTH_FUNC, &got);
    assert_int_equal(got, GL_GREATER);
    assert_false(glIsEnabled(GL_DEPTH_TEST));
    glDepthFunc(GL_LESS);
    glBindVertexArray(0);
    glDeleteBuffers(1, &ssbo);
    glDeleteTextures(1, &tex);
    glDeleteVertexArrays(1, &vao);
    cugl_app_target_destroy(pos);
}

/* Each bad argument refused with the call's name and what is wrong; a
 * draw of no triangles draws nothing and is no error. */
static void refusals(void **state)
{
    (void)state;
    static const float p[12] = {0};
    cugl_app_target *pos = buffer(p, sizeof p), *small = buffer(p, 8);
    cugl_app_target *image = NULL;
    assert_ok(cugl_app_target_create(&image, ctx, &(cugl_app_target_desc){.width = 4,
                                                                          .height = 4}));
    const cugl_app_mesh_desc ok = {.positions = pos};
    const struct {
        cugl_app_mesh_desc m;
        size_t vertices, triangles;
        const char *says;
    } cases[] = {
        {{0}, 3, 1, "mesh->positions is NULL"},
        {{.positions = pos, .components = 2}, 3, 1, "2 components a vertex: 3 or 4"},
        {{.positions = image}, 3, 1, "mesh->positions is not a buffer"},
        {{.positions = pos}, 5, 1, "mesh->positions is too small: 60 bytes wanted, it holds 48"},
        {{.positions = pos, .components = 4}, 4, 1, "mesh->positions is too small"},
        {{.positions = pos, .scalars = small}, 4, 1, "mesh->scalars is too small"},
        {{.positions = pos}, 4, 2, "2 triangles without indices need 6 vertices; there are 4"},
        {{.positions = pos, .vmin = NAN, .vmax = 1}, 3, 1, "the scalars' range nan .. 1"},
        {{.positions = pos, .vmin = 1, .vmax = 1}, 3, 1, "vmin below vmax"},
        {{.positions = pos, .vmin = 2, .vmax = 1}, 3, 1, "vmin below vmax"},
        {{.positions = pos, .vmin = -FLT_MAX, .vmax = FLT_MAX}, 3, 1, "vmin below vmax"},
        {{.positions = pos, .colormap = (cugl_app_colormap)7}, 3, 1, "colour map 7 is none"},
        {{.positions = pos, .shading = (cugl_app_shading)5}, 3, 1, "shading 5"},
        {{.positions = pos, .rgba = {2, 0, 0, 1}}, 3, 1, "rgba[0] is 2"},
        {{.positions = pos, .rgba = {0, NAN, 0, 1}}, 3, 1, "rgba[1] is nan"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cugl_status st = cugl_app_draw_mesh(&cases[i].m, cases[i].vertices, cases[i].triangles,
                                            NULL);
        if (st != CUGL_ERROR_INVALID_ARGUMENT || !strstr(cugl_last_error(), cases[i].says) ||
            strncmp(cugl_last_error(), "cugl_app_draw_mesh: ", 20) != 0)
            fail_msg("case %zu: status %d, \"%s\"; want \"%s\"", i, (int)st, cugl_last_error(),
                     cases[i].says);
    }
    assert_status(cugl_app_draw_mesh(NULL, 3, 1, NULL), CUGL_ERROR_INVALID_ARGUMENT);
    assert_string_equal(cugl_last_error(), "cugl_app_draw_mesh: mesh is NULL");
    uint8_t *px = drawn(&ok, 0, 0);
    static const uint8_t blue[3] = {0, 0, 255};
    for (int i = 0; i < W * H; i++)
        expect_rgb(px + 4 * i, blue, "no triangles");
    free(px);
    cugl_app_target_destroy(image);
    cugl_app_target_destroy(small);
    cugl_app_target_destroy(pos);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(colour_maps_have_their_entries),
        cmocka_unit_test(triangles_take_their_colours),
        cmocka_unit_test(indices_pick_vertices),
        cmocka_unit_test(depth_decides_not_order),
        cmocka_unit_test(shading_follows_the_face),
        cmocka_unit_test(scalars_run_between_vertices),
        cmocka_unit_test(lines_between_vertices),
        cmocka_unit_test(a_strip_through_its_vertices),
        cmocka_unit_test(points_in_their_colours),
        cmocka_unit_test(text_is_freetype_s_glyphs),
        cmocka_unit_test(colorbar_rows_ticks_and_labels),
        cmocka_unit_test(text_refusals),
        cmocka_unit_test(axes_and_labels),
        cmocka_unit_test(a_volume_ray_marched),
        cmocka_unit_test(gl_state_is_put_back),
        cmocka_unit_test(refusals),
    };
    return gl_test_run(tests, "cugl-draw-");
}
