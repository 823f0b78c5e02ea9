/*
 * serve_internal.h - the frame server's JPEG encoders on the GPU
 * (serve_nvjpeg.c: GL compute shaders, jpeg_gl.c, or nvJPEG), and its
 * video codecs (serve_video.c, serve_h264.c), for the server's files (server.h). The JPEG
 * encoders' functions are called on the render thread, the GL context current, but for is_done
 * and take (any thread); what waits for the GPU waits on a thread of their
 * own (cugl-gpu-jpeg).
 */
#ifndef CUGL_APP_SERVE_INTERNAL_H
#define CUGL_APP_SERVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app_internal.h"

enum { CUGL__GPU_JPEG_JOBS = 24 }; /* encodes in flight: a few frames of a few levels */

typedef struct cugl__gpu_jpeg cugl__gpu_jpeg;

/* The JPEG encoder on the GPU of the current GL context: GL compute
 * shaders (jpeg_gl.c), or with `nvjpeg` nvJPEG on the CUDA device that runs
 * the context; NULL where it cannot be had, with the reason in `why` (no
 * compute shaders, no CUDA device under GL, no libnvjpeg, ...). On success
 * `why` says what was found. `done(user)` is called on the encoder's
 * thread each time it has finished with a job (cugl__gpu_jpeg_is_done and
 * _take may be called there). */
cugl__gpu_jpeg *cugl__gpu_jpeg_open(cugl_app_context *ctx, bool nvjpeg, void (*done)(void *user),
                                    void *user, char *why, size_t why_size);
void cugl__gpu_jpeg_close(cugl__gpu_jpeg *g);

/* "gl-compute" or "nvjpeg": the name frames' headers give. */
const char *cugl__gpu_jpeg_name(const cugl__gpu_jpeg *g);

/* A job not in use for a width x height picture, a hash job's where
 * `hash` (one with room for it where one is free), or -1. */
int cugl__gpu_jpeg_free_job(cugl__gpu_jpeg *g, int width, int height, bool hash);

/* Job `index`: the framebuffer `from` (width x height, GL's rows bottom
 * first), scaled down by `scale`, to a JPEG at `quality`: the GPU work is
 * queued and this returns. `color` is the texture `from` draws into
 * (cugl__app_context_color), read where it is; 0 (a window's): blitted. */
cugl_status cugl__gpu_jpeg_start(cugl__gpu_jpeg *g, int index, GLuint from, GLuint color,
                                 int width, int height, int scale, int quality, const char *who);

/* Job `index`: a hash of every texel of the framebuffer `from` (width x
 * height; of `color` where it is, else blitted at half size, every texel
 * in one of its) by a compute shader: GL's work alone, queued, and this
 * returns. cugl__gpu_jpeg_take_hash takes it once done. */
cugl_status cugl__gpu_jpeg_start_hash(cugl__gpu_jpeg *g, int index, GLuint from, GLuint color,
                                      int width, int height, const char *who);

/* Move job `index` on: to the encoder's thread once its copy is done; the
 * encoder's failure, as an error. cugl__gpu_jpeg_is_done says when its JPEG
 * is ready for cugl__gpu_jpeg_take. */
cugl_status cugl__gpu_jpeg_poll(cugl__gpu_jpeg *g, int index, const char *who);

/* Whether job `index` is done (no GL call: any thread). */
bool cugl__gpu_jpeg_is_done(cugl__gpu_jpeg *g, int index);

/* The JPEG of a done job (malloc'ed, the caller frees; NULL where GL's
 * encoder ran out of room, which it has twice of next time), its
 * picture's size and the GPU's time encoding it; the job is free again. */
unsigned char *cugl__gpu_jpeg_take(cugl__gpu_jpeg *g, int index, size_t *size, int *width,
                                   int *height, double *encode_ms);

/* The hash of a done hash job (never 0); the job is free again. */
uint64_t cugl__gpu_jpeg_take_hash(cugl__gpu_jpeg *g, int index);

/* Drop job `index`, whatever its phase. */
void cugl__gpu_jpeg_cancel(cugl__gpu_jpeg *g, int index);

/* The video codecs, in the order "codecs" lines name them. VP9 is the
 * recorder's (a page that names it gets H.264 or VP8: VIDEO_ORDER). */
typedef enum cugl__video_codec {
    CUGL__VIDEO_VP8,
    CUGL__VIDEO_H264,
    CUGL__VIDEO_VP9,
    CUGL__VIDEO_CODECS
} cugl__video_codec;

/* Each video codec (model.c, built with the server whatever codecs are):
 * its name in the protocol ("vp8"), for people ("VP8"), its encoder
 * ("libvpx"), and whether this cugl was built with it. */
typedef struct cugl__video_codec_info {
    const char *name, *title, *encoder;
    bool built;
} cugl__video_codec_info;
extern const cugl__video_codec_info cugl__video_codecs[CUGL__VIDEO_CODECS];

/* A viewer's video stream (serve_video.c, where a codec is:
 * CUGL_SERVE_VIDEO). One encoder thread at a time a stream. */
typedef struct cugl__video cugl__video;

/* NULL where `codec` was not built in, or without memory. */
cugl__video *cugl__video_new(cugl__video_codec codec);
/* Before the first frame: the encoder's speed held, not picked from the
 * time frames take (libvpx's real-time mode), and OpenH264 on one thread
 * (its slices on several threads made 258 and 259 kB of the same 90
 * frames at 640x360 on 16 cores), so that the same frames give the same
 * bytes however loaded the machine (the recorder's). */
void cugl__video_fixed_speed(cugl__video *v);
/* Before the first frame: the PSNR of a frame a second (of the stream's
 * time) measured, the I420 picture libvpx was given against the one it
 * reconstructs, Y, U and V by their samples; false where the codec has no
 * reconstruction to read (OpenH264). cugl__video_psnr: the last measured,
 * in dB, or -1 where none was. */
bool cugl__video_measure(cugl__video *v);
double cugl__video_psnr(const cugl__video *v);
void cugl__video_close(cugl__video *v);

/* The frame (RGBA rows bottom first, width x height, of a program that
 * renders `fps` frames a second) as a frame of v's codec at `kbps` (a key
 * frame if `key`, and at the start or a new size; H.264: an access unit
 * in Annex B, with SPS and PPS before an IDR): malloc'ed, `size` bytes,
 * *is_key; NULL with `why`. Each frame gets 1 / fps of a second's bits
 * (fps at most 60), however long since the one before. */
unsigned char *cugl__video_encode(cugl__video *v, const uint8_t *rgba, int width, int height,
                                  double fps, int kbps, bool key, size_t *size, bool *is_key,
                                  char *why, size_t why_size);

/* The threads an encoder of a w x h picture takes on this machine: on 16
 * cores 8 up to 1920 x 1080 (1080p VP8 took 16.6 ms a frame on 4 and 12.2
 * on 8 on an H100 machine; more gave little), and for larger pictures
 * (3840 x 2160 is four times the rows) as many as the cores less two for
 * the render and encoder loops, at most 16; fewer on fewer cores. */
int cugl__video_threads(int w, int h);

/* RGBA (rows bottom first, `stride` bytes a row, w x h, both even) into
 * the I420 picture `planes` (rows top first; BT.601, limited range, as
 * browsers decode), in `bands` bands of rows (at most CUGL__I420_BANDS, at
 * least 16 rows each), all but the first each on a thread of its own for
 * the call: the same bytes however many. */
enum { CUGL__I420_BANDS = 16 };
void cugl__video_to_i420(uint8_t *const planes[3], const int strides[3], const uint8_t *rgba,
                         int w, int h, size_t stride, int bands);

/* OpenH264's encoder (serve_h264.c, CUGL_SERVE_H264): for w x h at
 * `kbps`, its slices on `threads` threads (one: the same frames make the
 * same bytes; cugl__video_threads otherwise), NULL with `why`; the I420
 * picture `planes` (`strides` bytes a row) at `ms` as an access unit in
 * Annex B (as cugl__video_encode). */
typedef struct cugl__h264 cugl__h264;
cugl__h264 *cugl__h264_open(int w, int h, double fps, int kbps, int threads, char *why,
                             size_t why_size);
void cugl__h264_close(cugl__h264 *e);
unsigned char *cugl__h264_encode(cugl__h264 *e, uint8_t *const planes[3], const int strides[3],
                                 long long ms, double fps, int kbps, bool key, size_t *size,
                                 bool *is_key, char *why, size_t why_size);

#endif /* CUGL_APP_SERVE_INTERNAL_H */
