/**
 * @file cugl/app_draw.h
 * Drawers: what CUDA writes, drawn from its targets' own GL objects with no
 * copy, on any interop path (cugl/app_target.h): triangle meshes, lines,
 * line strips and points, each vertex coloured by its scalar through a
 * colour map or in one colour; volumes, ray-marched; and overlays: text,
 * labels in 3-D, axes, and a colorbar with its values. A frame:
 *
 *   cugl_app_target_cuda_begin ... kernels write positions, scalars ... end
 *   glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
 *   cugl_app_draw_mesh(&mesh, vertices, triangles, camera_matrix);
 *
 * A drawer takes its targets' GL turn itself (one turn for all of them) and
 * draws into the bound framebuffer, depth-tested against its depth buffer,
 * putting back the GL state it changes. Scalars become colours through a
 * colour map: t = clamp((v - vmin) / (vmax - vmin), 0, 1) (NaN counts as
 * vmin), entry int(t * 255 + 0.5) of the map's 256.
 */
#ifndef CUGL_APP_DRAW_H
#define CUGL_APP_DRAW_H

#include <stdint.h>

#include "cugl/app_target.h"

CUGL_BEGIN_DECLS

/** A colour map: 256 RGBA8 entries, dark to light. */
typedef enum cugl_app_colormap {
    /** "cugl": black through blue, teal, green and yellow to white, its
     * brightness rising all the way (Python's cugl.colormap default). */
    CUGL_APP_COLORMAP_CUGL = 0,
    CUGL_APP_COLORMAP_GREY = 1, /**< black to white */
} cugl_app_colormap;

/**
 * A colour map's 256 entries, RGBA8 (alpha 255): entry i at rgba[4 i] to
 * rgba[4 i + 3], for a program that maps values itself (or draws a
 * colorbar of its own).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a cugl_app_colormap).
 * @thread_safety Any thread.
 * @param map The colour map.
 * @param[out] rgba Receives the entries: 1024 bytes.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_colormap_table(cugl_app_colormap map, uint8_t rgba[1024]);

/** How a mesh is lit. */
typedef enum cugl_app_shading {
    /** Each triangle by its own normal against a light at the eye (a
     * headlight, both sides lit): a surface shows its shape. */
    CUGL_APP_SHADING_FLAT = 0,
    CUGL_APP_SHADING_NONE = 1, /**< unlit: the colours as they are */
} cugl_app_shading;

/** A triangle mesh whose buffers CUDA writes (targets of kind
 * CUGL_APP_TARGET_BUFFER of one context); lines, a line strip and points
 * take the same (drawn unlit: `shading` is a mesh's alone). A zero field
 * takes its default. */
typedef struct cugl_app_mesh_desc {
    /** Positions: `components` floats a vertex (x, y, z and an unused w). */
    cugl_app_target *positions;
    int components; /**< 3 or 4; 0: 3 */
    /** One float a vertex, coloured through `colormap`; NULL: `rgba`. */
    cugl_app_target *scalars;
    /** Three uint32 vertex indices a triangle (two a segment of lines;
     * strips and points take none); NULL: vertices 3i, 3i + 1 and 3i + 2
     * make triangle i (2i and 2i + 1 segment i). A triangle or segment with
     * an index past the vertices is not drawn. */
    cugl_app_target *indices;
    cugl_app_colormap colormap; /**< CUGL_APP_COLORMAP_CUGL (0) or another */
    /** The value drawn as the map's first entry (vmin < vmax, both
     * finite; both 0: the range 0 .. 1). */
    float vmin;
    float vmax; /**< the value drawn as its last entry */
    /** The colour without scalars, 0 .. 1 each; all 0: opaque white. */
    float rgba[4];
    cugl_app_shading shading; /**< CUGL_APP_SHADING_FLAT (0) or NONE */
} cugl_app_mesh_desc;

/**
 * Draw `triangles` triangles of a mesh of `vertices` vertices, positions
 * transformed by `matrix` (column-major 4x4 to clip space: a camera's
 * projection times its view; NULL: none), into the bound framebuffer,
 * depth-tested (GL_LESS, writing depth) where it has a depth buffer, in
 * one GL turn of the mesh's targets.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL desc or positions; a target
 *   that is no buffer, or of another context than the positions'; 
 *   components not 3 or 4; more vertices than the positions or scalars
 *   hold, more triangles than the indices hold, or without indices more
 *   than vertices / 3; a range that is not finite or empty; not a
 *   colour map or a shading), CUGL_ERROR_INVALID_STATE (a turn is open),
 *   the statuses of cugl_app_targets_gl_begin and _end, CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param mesh The mesh.
 * @param vertices Vertices the positions (and scalars) hold for this draw.
 * @param triangles Triangles to draw; 0 draws nothing.
 * @param matrix Column-major 4x4 applied to each position, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_mesh(const cugl_app_mesh_desc *mesh, size_t vertices,
                                        size_t triangles, const float matrix[16]);

/**
 * Draw `segments` line segments between a mesh's vertices (trajectories'
 * steps, vectors, edges), one pixel wide, as cugl_app_draw_mesh draws
 * triangles: two indices a segment, or vertices 2i and 2i + 1; coloured
 * by the scalars (interpolated along each) or `rgba`; unlit.
 * @errors as cugl_app_draw_mesh, for segments.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param mesh The vertices (and scalars, indices, colours).
 * @param vertices Vertices the positions (and scalars) hold for this draw.
 * @param segments Segments to draw; 0 draws nothing.
 * @param matrix Column-major 4x4 applied to each position, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_lines(const cugl_app_mesh_desc *mesh, size_t vertices,
                                         size_t segments, const float matrix[16]);

/**
 * Draw one line through the first `vertices` vertices in order (a
 * trajectory, a streamline), one pixel wide, as cugl_app_draw_lines; no
 * indices.
 * @errors as cugl_app_draw_lines; CUGL_ERROR_INVALID_ARGUMENT for indices.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param mesh The vertices (and scalars, colours).
 * @param vertices Vertices of the line; fewer than 2 draw nothing.
 * @param matrix Column-major 4x4 applied to each position, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_line_strip(const cugl_app_mesh_desc *mesh, size_t vertices,
                                              const float matrix[16]);

/**
 * Draw the first `vertices` vertices as squares `point_size` pixels a side,
 * each its scalar's colour (or `rgba`), depth-tested, unlit; no indices.
 * (cugl_app_target_draw_points draws one target's points in one colour.)
 * @errors as cugl_app_draw_lines; CUGL_ERROR_INVALID_ARGUMENT for indices
 *   and a point size that is not more than 0 and at most 4096.
 * @thread_safety The thread whose GL context made the targets, with it current.
 * @param mesh The vertices (and scalars, colours).
 * @param vertices Points to draw; 0 draws nothing.
 * @param point_size Pixels a side.
 * @param matrix Column-major 4x4 applied to each position, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_points(const cugl_app_mesh_desc *mesh, size_t vertices,
                                          float point_size, const float matrix[16]);

/**
 * Draw one line of text into the bound framebuffer: its baseline's left
 * end at (x, y), pixels from the current viewport's bottom-left corner
 * (rounded to whole pixels), `pixels` high (the font's em; capitals are
 * about 0.73 of it), in `rgba` blended over what is there (its alpha times
 * each glyph's coverage), not depth-tested. The font is DejaVu Sans
 * (Debian's fonts-dejavu-core), rendered by FreeType at that size, or the
 * TrueType font the environment's CUGL_APP_FONT names; the printable ASCII
 * characters, each other byte drawn as '?'. The GL state it changes is put
 * back.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a size not from 4 to 256
 *   pixels; a colour outside 0 .. 1; a position not within a million
 *   pixels), CUGL_ERROR_NOT_SUPPORTED (no font: the message names the path
 *   tried), CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context `ctx` is, with it current.
 * @param ctx The context.
 * @param text The text (NUL-terminated).
 * @param x The baseline's left end, pixels from the viewport's left.
 * @param y The baseline, pixels from the viewport's bottom.
 * @param pixels The size.
 * @param rgba The colour, 4 floats in 0 .. 1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_text(cugl_app_context *ctx, const char *text, float x,
                                        float y, float pixels, const float rgba[4]);

/**
 * How wide cugl_app_draw_text draws `text` at `pixels`: the sum of its
 * characters' advances, in pixels (to right-align or centre a label).
 * @errors as cugl_app_draw_text's, and CUGL_ERROR_INVALID_ARGUMENT for a
 *   NULL width.
 * @thread_safety The thread whose GL context `ctx` is, with it current.
 * @param ctx The context.
 * @param text The text.
 * @param pixels The size.
 * @param[out] width Receives the width; 0 on failure.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_text_width(cugl_app_context *ctx, const char *text, float pixels,
                                         int *width);

/** A colorbar: a colour map from vmin (the bar's bottom) to vmax (its
 * top) in a box of the viewport, with labelled ticks to its right. A zero
 * field takes its default. */
typedef struct cugl_app_colorbar_desc {
    cugl_app_colormap colormap; /**< CUGL_APP_COLORMAP_CUGL (0) or another */
    /** The value at the bar's bottom (vmin < vmax, both finite; both 0:
     * the range 0 .. 1). */
    float vmin;
    float vmax; /**< the value at its top */
    /** The bar's box: its bottom-left corner, pixels from the viewport's. */
    int x;
    int y;      /**< (see x) */
    int width;  /**< its width in pixels, >= 1; 0: 16 */
    int height; /**< its height in pixels, >= 2; 0: 200 */
    /** Labelled values from vmin to vmax, evenly spaced, >= 2; 0: 5. */
    int ticks;
    float text_pixels; /**< the labels' size; 0: 14 */
    /** The ticks' and labels' colour, 0 .. 1 each; all 0: opaque white. */
    float rgba[4];
} cugl_app_colorbar_desc;

/**
 * Draw a colorbar into the bound framebuffer: row k of its `height` (from
 * the bottom) in the map's entry for t = (k + 0.5) / height, as a mesh's
 * scalar vmin + t (vmax - vmin) is drawn; a tick 4 pixels long at each
 * labelled value's row, right of the bar, and its value ("%.3g") right of
 * the tick, centred on it (cugl_app_draw_text). Not depth-tested; the GL
 * state it changes is put back.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a colour map; a range that
 *   is not finite or empty; a size or tick count below the least; a colour
 *   outside 0 .. 1), and cugl_app_draw_text's.
 * @thread_safety The thread whose GL context `ctx` is, with it current.
 * @param ctx The context.
 * @param bar The colorbar.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_colorbar(cugl_app_context *ctx,
                                            const cugl_app_colorbar_desc *bar);

/** A 3-D array of values that CUDA writes (a target of kind
 * CUGL_APP_TARGET_VOLUME; the value of a voxel is its first component),
 * filling a box of the scene. A zero field takes its default. */
typedef struct cugl_app_volume_desc {
    cugl_app_target *volume;     /**< the values */
    float min[3];                /**< the box's least corner; all 0 with max: -1 .. 1 */
    float max[3];                /**< its greatest, each above min */
    cugl_app_colormap colormap;  /**< CUGL_APP_COLORMAP_CUGL (0) or another */
    float vmin;                  /**< the value drawn as the map's first entry, transparent */
    float vmax;                  /**< its last, the most opaque (both 0: 0 .. 1) */
    /** A sample's opacity at vmax (t times it at t), above 0 and at most 1;
     * 0: 0.05. */
    float density;
    int steps; /**< samples along the box's diagonal, 1 to 4096; 0: 256 */
} cugl_app_volume_desc;

/**
 * Draw a volume: each pixel's ray through `matrix` (the camera's, as the
 * drawers take it; its inverse finds the ray) clipped to the box, sampled
 * `steps` times along the box's diagonal (trilinear), each sample's value
 * through the colour map as a mesh's scalar (t from vmin to vmax) with
 * opacity t * density, composited front to back and blended over the
 * picture; not depth-tested (draw it after the opaque drawers). One GL turn
 * of its target; the GL state it changes is put back.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a volume target; a box or
 *   range that is not finite or empty; a density or step count out of
 *   range; not a colour map; a matrix without an inverse),
 *   CUGL_ERROR_INVALID_STATE (a turn is open), the statuses of
 *   cugl_app_target_gl_begin and _end, CUGL_ERROR_GL.
 * @thread_safety The thread whose GL context made the target, with it current.
 * @param volume The volume.
 * @param matrix Column-major 4x4 to clip space, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_volume(const cugl_app_volume_desc *volume,
                                          const float matrix[16]);

/**
 * Draw a line of text anchored at a point of the scene: its baseline's
 * left end at `xyz` taken through `matrix` (as the drawers' positions;
 * NULL: none) to the viewport, as cugl_app_draw_text draws it. A point
 * behind the eye or off the clip volume draws nothing.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a point that is not finite),
 *   and cugl_app_draw_text's.
 * @thread_safety The thread whose GL context `ctx` is, with it current.
 * @param ctx The context.
 * @param text The text.
 * @param xyz The point, 3 floats.
 * @param matrix Column-major 4x4 to clip space, or NULL.
 * @param pixels The size.
 * @param rgba The colour, 4 floats in 0 .. 1.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_label(cugl_app_context *ctx, const char *text,
                                         const float xyz[3], const float matrix[16],
                                         float pixels, const float rgba[4]);

/** Axes along the edges of a box from its min corner, each with labelled
 * ticks. A zero field takes its default. */
typedef struct cugl_app_axes_desc {
    /** The box's least corner (scene coordinates, finite). */
    float min[3];
    /** Its greatest: max[i] >= min[i]; an axis where they are equal is not
     * drawn, and at least one must differ. */
    float max[3];
    int ticks;          /**< labelled values an axis, evenly spaced, 2 to 64; 0: 5 */
    float text_pixels;  /**< the values' size (the names' a quarter more); 0: 12 */
    float rgba[4];      /**< the colour, 0 .. 1 each; all 0: opaque white */
    /** The axes' names, drawn beyond their ends; NULL: "x", "y", "z". */
    const char *labels[3];
} cugl_app_axes_desc;

/**
 * Draw axes: a line from the box's min corner along each axis that spans,
 * its ticks (a 40th of the box's largest side, pointing away from the
 * box along the next axis), each tick's value ("%.3g") as a label at its
 * end, and the axis's name beyond it; lines depth-tested as
 * cugl_app_draw_lines draws them, labels over the picture
 * (cugl_app_draw_label), all through `matrix`.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL ctx or axes; a box that is not
 *   finite, is a point or has max below min; a tick count or text size out
 *   of range; a colour outside 0 .. 1), and cugl_app_draw_text's.
 * @thread_safety The thread whose GL context `ctx` is, with it current.
 * @param ctx The context.
 * @param axes The axes.
 * @param matrix Column-major 4x4 to clip space, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_draw_axes(cugl_app_context *ctx, const cugl_app_axes_desc *axes,
                                        const float matrix[16]);

CUGL_END_DECLS

#endif /* CUGL_APP_DRAW_H */
