/*
 * webm.h - a WebM (Matroska) muxer for one VP8 or VP9 video track, for the
 * recorder: the frames libvpx's encoder gives, written into Clusters as
 * they come, the index (Cues) and the sizes written at the end. Ours, in
 * C11: libwebm is C++. Not installed.
 *
 * One thread at a time a muxer. Every message names the `who` given to
 * cugl__webm_open (the public call that records).
 */
#ifndef CUGL_APP_RECORD_WEBM_H
#define CUGL_APP_RECORD_WEBM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cugl/cugl.h>

typedef struct cugl__webm cugl__webm;

typedef enum cugl__webm_codec { CUGL__WEBM_VP8, CUGL__WEBM_VP9 } cugl__webm_codec;

/*
 * Start a WebM on `f` (opened for writing, seekable, empty): the headers
 * are written now. width x height: the picture; `timescale`: ticks a
 * second of the timestamps given (60 for a fixed 60 fps clock, 1000000 for
 * microseconds). The file's timestamps are milliseconds (see webm.c).
 * `who` is kept, not copied: a string that outlives the muxer (__func__,
 * a literal); NULL names cugl__webm_open.
 *
 * @errors CUGL_ERROR_INVALID_ARGUMENT: out or f NULL, an unknown codec, a
 * width or height <= 0 or > 16384, timescale 0, f not seekable (a pipe),
 * or a failed write (as lib/app/file.c reports one: strerror's words);
 * CUGL_ERROR_OUT_OF_MEMORY. On failure *out is NULL.
 */
cugl_status cugl__webm_open(cugl__webm **out, FILE *f, cugl__webm_codec codec, int width,
                            int height, uint32_t timescale, const char *who);

/*
 * One frame as libvpx's encoder gives it (a VPX_CODEC_CX_FRAME_PKT's
 * buffer), written now; pts in timescale ticks, >= 0 and strictly
 * increasing; `key`: a key frame (VPX_FRAME_IS_KEY). The first must be one.
 *
 * @errors CUGL_ERROR_INVALID_ARGUMENT: m or frame NULL, size 0, pts < 0,
 * not after the last or too large for milliseconds in 64 bits, the first
 * frame not a key frame (these write nothing, and the muxer goes on); a
 * failed write, now or before (the muxer then refuses everything but
 * cugl__webm_finish and cugl__webm_abort); CUGL_ERROR_OUT_OF_MEMORY.
 */
cugl_status cugl__webm_add(cugl__webm *m, const uint8_t *frame, size_t size, int64_t pts,
                           bool key);

/*
 * Close it: the last Cluster's size, the Cues (one a key frame), the
 * Segment's size, the SeekHead's position of the Cues and Info's Duration
 * (`end_pts`: where the last frame ends, at or after its pts), then fflush.
 * Frees m whatever happens; does not fclose f. A file without frames is a
 * valid WebM with a track, one empty Cluster and no Cues.
 *
 * @errors CUGL_ERROR_INVALID_ARGUMENT: m NULL, end_pts before the last
 * frame's pts (the file is left unfinished), a failed write, now or
 * before; CUGL_ERROR_OUT_OF_MEMORY.
 */
cugl_status cugl__webm_finish(cugl__webm *m, int64_t end_pts);

/* Drop everything (a failed recording): frees m, writes nothing more.
 * NULL: nothing. */
void cugl__webm_abort(cugl__webm *m);

#endif /* CUGL_APP_RECORD_WEBM_H */
