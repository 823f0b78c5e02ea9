/*
 * png.c - RGBA8 images to and from PNG files with libpng.
 *
 * libpng reports errors by longjmp. Each setjmp sits in a function of its
 * own that keeps every piece of state in a job owned by its caller, so
 * nothing the caller frees afterwards lives in a clobbered local.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "app_internal.h"

typedef struct png_job {
    const char *path;
    FILE *file;
    png_structp png;
    png_infop info;
    char message[256]; /* libpng's error */
    bool out_of_memory;
    bool too_large; /* more than CUGL_APP_PNG_MAX_PIXELS, by the header */
    /* write */
    const uint8_t *rgba;
    int width, height;
    /* read */
    uint8_t *pixels;
    png_bytep *rows;
    png_uint_32 read_width, read_height;
} png_job;

static void on_error(png_structp png, png_const_charp message)
{
    png_job *job = png_get_error_ptr(png);
    snprintf(job->message, sizeof job->message, "%s", message);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message)
{
    (void)png;
    (void)message;
}

static void errno_text(int e, char *text, size_t size)
{
    if (strerror_r(e, text, size) != 0)
        snprintf(text, size, "errno %d", e);
}

static cugl_status open_failed(const char *who, const char *path, const char *how)
{
    int e = errno;
    char text[128];
    errno_text(e, text, sizeof text);
    return cugl__fail(e == ENOMEM ? CUGL_ERROR_OUT_OF_MEMORY
                      : CUGL_ERROR_INVALID_ARGUMENT,
                      who, "cannot open %s for %s: %s", path, how, text);
}

static bool write_body(png_job *job)
{
    if (setjmp(png_jmpbuf(job->png)))
        return false;
    png_init_io(job->png, job->file);
    png_set_IHDR(job->png, job->info, (png_uint_32)job->width, (png_uint_32)job->height, 8,
                 PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(job->png, job->info);
    size_t row = (size_t)job->width * 4;
    for (int y = 0; y < job->height; y++)
        png_write_row(job->png, job->rgba + (size_t)y * row);
    png_write_end(job->png, NULL);
    return true;
}

cugl_status cugl__app_write_png(const char *who, const char *path, const uint8_t *rgba,
                                int width, int height)
{
    if (!path)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "path is NULL");
    if (!rgba)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "rgba is NULL");
    if (width <= 0 || height <= 0)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "%s: size %d x %d is not positive", path, width, height);
    png_job job = {.path = path, .rgba = rgba, .width = width, .height = height};
    cugl__app_file out;
    CUGL__TRY(cugl__app_file_open(&out, who, path));
    job.file = out.file;
    job.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, on_error, on_warning);
    job.info = job.png ? png_create_info_struct(job.png) : NULL;
    bool made = job.info != NULL, ok = made && write_body(&job);
    int write_errno = ferror(job.file) ? errno : 0;
    png_destroy_write_struct(job.png ? &job.png : NULL, job.info ? &job.info : NULL);
    if (ok)
        return cugl__app_file_commit(&out, who, path);
    cugl__app_file_abandon(&out); /* what was at the path stays */
    if (!made)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, who, "%s: libpng has no memory", path);
    if (write_errno) {
        char text[128];
        errno_text(write_errno, text, sizeof text);
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                          "writing %s failed: %s; what was there is left as it was", path,
                          text);
    }
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "%s: libpng: %s", path,
                      job.message);
}

CUGL_API cugl_status cugl_app_write_png(const char *path, const uint8_t *rgba, int width,
                                        int height)
{
    return cugl__app_write_png(__func__, path, rgba, width, height);
}

/* Any colour type and depth becomes 8-bit RGBA. */
static void expand_to_rgba8(png_structp png, png_infop info)
{
    int depth = png_get_bit_depth(png, info), color = png_get_color_type(png, info);
    bool transparency = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (transparency)
        png_set_tRNS_to_alpha(png);
    if (depth == 16)
        png_set_scale_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    if (!(color & PNG_COLOR_MASK_ALPHA) && !transparency)
        png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
}

static bool read_body(png_job *job)
{
    if (setjmp(png_jmpbuf(job->png)))
        return false;
    png_init_io(job->png, job->file);
    png_set_sig_bytes(job->png, 8);
    png_read_info(job->png, job->info);
    png_uint_32 width = png_get_image_width(job->png, job->info);
    png_uint_32 height = png_get_image_height(job->png, job->info);
    job->read_width = width;
    job->read_height = height;
    if ((uint64_t)width * height > CUGL_APP_PNG_MAX_PIXELS) {
        job->too_large = true;
        return false;
    }
    expand_to_rgba8(job->png, job->info);
    size_t row = (size_t)width * 4;
    if (png_get_rowbytes(job->png, job->info) != row)
        png_error(job->png, "rows are not 8-bit RGBA after conversion");
    job->pixels = malloc(row * height);
    job->rows = malloc(sizeof *job->rows * height);
    if (!job->pixels || !job->rows) {
        job->out_of_memory = true;
        png_error(job->png, "no memory for the pixels");
    }
    for (png_uint_32 y = 0; y < height; y++)
        job->rows[y] = job->pixels + (size_t)y * row;
    png_read_image(job->png, job->rows);
    png_read_end(job->png, NULL);
    return true;
}

CUGL_API cugl_status cugl_app_read_png(uint8_t **rgba, int *width, int *height,
                                       const char *path)
{
    /* The outputs given are cleared first, whatever fails. */
    if (rgba)
        *rgba = NULL;
    if (width)
        *width = 0;
    if (height)
        *height = 0;
    CUGL__CHECK_NOT_NULL(path);
    if (!rgba || !width || !height)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s is NULL",
                          !rgba ? "rgba" : !width ? "width" : "height");
    png_job job = {.path = path};
    job.file = fopen(path, "rb");
    if (!job.file)
        return open_failed(__func__, path, "reading");
    png_byte signature[8];
    size_t got = fread(signature, 1, sizeof signature, job.file);
    if (got != sizeof signature || png_sig_cmp(signature, 0, sizeof signature) != 0) {
        fclose(job.file);
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is not a PNG file (no PNG signature in its first %zu bytes)",
                          path, got);
    }
    job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, on_error, on_warning);
    job.info = job.png ? png_create_info_struct(job.png) : NULL;
    bool made = job.info != NULL, ok = made && read_body(&job);
    png_destroy_read_struct(job.png ? &job.png : NULL, job.info ? &job.info : NULL, NULL);
    fclose(job.file);
    free(job.rows);
    if (ok) {
        *rgba = job.pixels;
        *width = (int)job.read_width;
        *height = (int)job.read_height;
        return CUGL_OK;
    }
    free(job.pixels);
    if (job.too_large)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                          "%s is %u x %u pixels, more than the %d that cugl reads (1 GiB of RGBA)",
                          path, (unsigned)job.read_width, (unsigned)job.read_height,
                          CUGL_APP_PNG_MAX_PIXELS);
    if (!made || job.out_of_memory)
        return cugl__fail(CUGL_ERROR_OUT_OF_MEMORY, __func__, "%s: no memory to read it", path);
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "%s: libpng: %s", path, job.message);
}
