/**
 * @file cugl/app_image.h
 * Images and files: the framebuffer read back, PNG files, files written whole.
 *
 * Part of libcugl-app (cugl/app.h includes every part). Errors are
 * cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 */
#ifndef CUGL_APP_IMAGE_H
#define CUGL_APP_IMAGE_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/* ---- Readback and PNG ------------------------------------------------------- */

/**
 * Read the context's framebuffer (the default one or the FBO) as RGBA8,
 * rows top to bottom, into `rgba` of at least width * height * 4 bytes.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, too small: both sizes named),
 *   CUGL_ERROR_GL.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param[out] rgba the pixels, 4 bytes each, rows without padding.
 * @param size the bytes of rgba.
 * @param ctx the context, current on this thread.
 * @return CUGL_OK (also for a 0 x 0 framebuffer, writing nothing), or an error status (see
 *   Errors).
 */
CUGL_API cugl_status cugl_app_read_pixels(uint8_t *rgba, size_t size, cugl_app_context *ctx);

/**
 * Write `size` bytes as the whole of the file at `path`, replacing it only
 * once every byte is written: the bytes go to a temporary file beside it
 * (".<name>.<pid>-<n>.tmp", needing write permission in its folder) that is
 * renamed over the path. A failed write (a full disk, a file-size limit)
 * leaves what was at the path untouched and no temporary file. A symbolic
 * link's target is what is replaced (a chain of links is followed to its
 * end; a target that does not exist yet is written there, and the links stay
 * links; a link into a folder that does not exist is refused, naming the
 * link's target); a device or pipe at the path (such as
 * /dev/null) is written in place and never replaced or removed; a
 * directory is refused. Every file libcugl-app writes is written this way
 * (PNGs, recorded input events).
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL path, NULL data with a size, a
 *   directory at the path, the file cannot be opened or written: the path
 *   and the system's reason are in the message), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread; two writes of one path at once leave one of
 *   them whole.
 * @param path the file to write.
 * @param data the bytes; NULL only when size is 0.
 * @param size how many.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_write_file(const char *path, const void *data, size_t size);

/**
 * Write RGBA8 pixels (rows top to bottom) as an 8-bit RGBA PNG, replacing
 * the file at `path` only once the image is whole, as cugl_app_write_file
 * does: a failed write leaves what was there untouched.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, size not positive, the file
 *   cannot be opened or written: the path and the system's or libpng's
 *   reason are in the message), CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety Any thread.
 * @param path the file to write.
 * @param rgba width * height * 4 bytes, rows without padding.
 * @param width the image's width in pixels.
 * @param height the image's height in pixels.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_write_png(const char *path, const uint8_t *rgba, int width,
                                        int height);
/** The most pixels cugl_app_read_png reads: 16384 x 16384, 1 GiB of RGBA8. */
enum { CUGL_APP_PNG_MAX_PIXELS = 1 << 28 };

/**
 * Read a PNG (any colour type and depth libpng reads) as RGBA8 rows top to
 * bottom into a new malloc'ed buffer (free it with free()). Palette and
 * gray images are expanded, 16-bit channels scaled to 8, and images
 * without alpha made opaque (tRNS becomes alpha). An image of more than
 * CUGL_APP_PNG_MAX_PIXELS is refused from its header, before memory is
 * taken for it: a file of a few bytes can claim a million pixels a side.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL, the file cannot be opened, is
 *   not a PNG, is larger than CUGL_APP_PNG_MAX_PIXELS, or libpng refuses
 *   it: the path and the reason are in the message),
 *   CUGL_ERROR_OUT_OF_MEMORY. On failure *rgba is NULL and the sizes 0.
 * @thread_safety Any thread.
 * @param[out] rgba the pixels, a new buffer of width * height * 4 bytes.
 * @param[out] width the image's width in pixels.
 * @param[out] height the image's height in pixels.
 * @param path the file to read.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_read_png(uint8_t **rgba, int *width, int *height,
                                       const char *path);
/**
 * read_pixels then write_png.
 * @errors as cugl_app_read_pixels and cugl_app_write_png;
 *   CUGL_ERROR_INVALID_STATE for a 0 x 0 (minimised) window.
 * @thread_safety The thread that uses the context, with it current where GL is called.
 * @param ctx the context, current on this thread.
 * @param path the PNG file to write (replaced).
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_screenshot(cugl_app_context *ctx, const char *path);

CUGL_END_DECLS

#endif /* CUGL_APP_IMAGE_H */
