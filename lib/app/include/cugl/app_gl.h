/**
 * @file cugl/app_gl.h
 * GL helpers: shader programs, the blit, GL error checks.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_GL_H
#define CUGL_APP_GL_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/* ---- Shaders and the blit --------------------------------------------------- */

/**
 * Compile and link a program from GLSL sources (fragment may be NULL for
 * none). `name` names it in messages. Compile and link logs go into the
 * error message.
 * @errors CUGL_ERROR_INVALID_ARGUMENT, CUGL_ERROR_INVALID_STATE (GL not
 *   loaded: no context was made yet), CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the program's GL name; 0 on failure.
 * @param name the program's name in messages; NULL: "(unnamed)".
 * @param vertex_src the vertex shader's GLSL source, NUL-terminated.
 * @param fragment_src the fragment shader's GLSL source, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_program(uint32_t *out, const char *name, const char *vertex_src,
                                      const char *fragment_src);
/**
 * A compute program.
 * @errors as cugl_app_program.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] out the program's GL name; 0 on failure.
 * @param name the program's name in messages; NULL: "(unnamed)".
 * @param compute_src the compute shader's GLSL source, NUL-terminated.
 * @return CUGL_OK, or an error status, as cugl_app_program.
 */
CUGL_API cugl_status cugl_app_compute_program(uint32_t *out, const char *name,
                                              const char *compute_src);

/**
 * Draw `texture` (a GL_TEXTURE_2D with a float or normalised format) over
 * the whole of the currently bound framebuffer's viewport, nearest
 * filtering unless `linear`. The first call builds the program from the
 * embedded shaders/blit.{vert,frag}. Texel row 0 lands at the bottom, as
 * GL has it, so cugl_app_read_pixels() (top to bottom) returns the
 * texture's rows in reverse order. The caller's depth test and blending
 * apply; the blit's program, vertex array and texture unit 0 stay bound.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, not a texture, not 2D),
 *   CUGL_ERROR_GL (the blit shaders do not build: the log is in the message).
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, current; the blit's objects are made in it.
 * @param texture the GL name of the texture to draw.
 * @param linear true for linear filtering, false for nearest.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_blit(cugl_app_context *ctx, uint32_t texture, bool linear);

/**
 * Draw RGBA8 texels held in a GL buffer over the whole of the bound
 * framebuffer's viewport, nearest: texel (x, y) is the 4 bytes at
 * y * pitch + x * 4, row 0 at the bottom, as cugl_app_blit draws an RGBA8
 * texture (the same bytes give the same pixels). The fragment shader reads
 * the buffer as a shader storage buffer, so an image CUDA wrote into shared
 * memory (cugl_app_shared_gl_buffer) is shown with no copy into a texture.
 * The buffer stays bound to GL_SHADER_STORAGE_BUFFER binding 0, and the
 * program and vertex array stay bound.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a buffer; a size not
 *   positive; a pitch not a multiple of 4 or under 4 x width; a buffer too
 *   small for the image: both sizes in the message), CUGL_ERROR_GL (the
 *   shaders do not build).
 * @thread_safety The thread that uses the context, with it current.
 * @param ctx the context, current; the program is made in it.
 * @param buffer the GL name of the buffer.
 * @param width the image's width in texels.
 * @param height the image's height in texels.
 * @param pitch bytes from one row to the next.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_blit_rgba8_buffer(cugl_app_context *ctx, uint32_t buffer,
                                                int width, int height, size_t pitch);

/**
 * Copy the bottom-left width x height texels of an RGBA8 texture's level 0
 * into a GL buffer, texel (x, y) at byte y * pitch + x * 4, as
 * glGetTextureImage packs them but with a compute shader, which runs at
 * memory speed where a pack into imported (shared) memory does not. GL's
 * later commands see the bytes; CUDA sees them after a fence
 * (cugl_app_shared_gl_end). Leaves texture unit 0, storage buffer binding 0
 * and no program bound.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; not a texture or a buffer; a
 *   texture not GL_RGBA8 or smaller than the image; sizes and pitch as
 *   cugl_app_blit_rgba8_buffer takes them; a buffer too small),
 *   CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current.
 * @param ctx the context, current; the program is made in it.
 * @param texture the GL name of the RGBA8 texture.
 * @param buffer the GL name of the buffer.
 * @param width texels of a row to copy.
 * @param height rows to copy.
 * @param pitch bytes from one row to the next in the buffer.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_pack_rgba8(cugl_app_context *ctx, uint32_t texture, uint32_t buffer,
                                         int width, int height, size_t pitch);

/* ---- GL errors -------------------------------------------------------------- */

/**
 * Read and discard every pending GL error, so that the next
 * cugl_app_check_gl() sees only what follows. Before GL is loaded (no
 * context made yet), nothing.
 * @errors none.
 * @thread_safety The thread whose GL context is current.
 */
CUGL_API void cugl_app_drain_gl_errors(void);

/**
 * CUGL_OK when glGetError() has nothing; else CUGL_ERROR_GL, reported as
 * "<function>: <what>: GL error 0x0502" (cugl_report_error), with the
 * remaining errors drained.
 * @errors CUGL_ERROR_GL; CUGL_ERROR_INVALID_STATE before GL is loaded (no
 *   context made yet: that message starts "cugl_app_check_gl: ").
 * @thread_safety The thread whose GL context is current.
 * @param function the name the message starts with (the caller's, as a
 *   rule); NULL: "cugl_app_check_gl".
 * @param what what was just done, for the message; NULL: "(no description)".
 * @return CUGL_OK, CUGL_ERROR_GL or CUGL_ERROR_INVALID_STATE.
 */
CUGL_API cugl_status cugl_app_check_gl(const char *function, const char *what);

CUGL_END_DECLS

#endif /* CUGL_APP_GL_H */
