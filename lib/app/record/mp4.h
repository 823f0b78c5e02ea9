/*
 * mp4.h - an MP4 file (ISO BMFF) of one H.264 video track, written as the
 * frames come: the recorder's container (mp4.c). Internal to libcugl-app.
 *
 * The file is ftyp, one mdat of every sample and, at the end, moov: the
 * index the samples need. A file whose recording stopped before
 * cugl__mp4_finish has no index and does not play.
 */
#ifndef CUGL_APP_RECORD_MP4_H
#define CUGL_APP_RECORD_MP4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cugl/cugl.h>

typedef struct cugl__mp4 cugl__mp4;

/*
 * Start an MP4 on `f`: opened for writing, seekable and empty (the index
 * names offsets from its start). A width x height picture (1 to 16384
 * each); the timestamps given to cugl__mp4_add count `timescale` ticks a
 * second (60 for a fixed clock at 60 frames a second, 90000, ...). Writes
 * ftyp and mdat's header. Messages name `who` (copied).
 *
 * @errors CUGL_ERROR_INVALID_ARGUMENT: out, f or who NULL; a size out of
 *         range; timescale 0; f not seekable (a pipe) or not empty; a
 *         failed write (as the project's file code reports one).
 *         CUGL_ERROR_OUT_OF_MEMORY.
 */
cugl_status cugl__mp4_open(cugl__mp4 **out, FILE *f, int width, int height, uint32_t timescale,
                           const char *who);

/*
 * One access unit in Annex B form (each NAL unit after a start code,
 * 00 00 01 or 00 00 00 01), as OpenH264 gives it: all its layers' NAL
 * units one after another. `pts` in ticks, each after the last, by at
 * most 2^32 - 1 ticks (what stts holds); times in the file count from the
 * first sample's. `key`: an IDR picture. The first sample must be one,
 * and carry an SPS and a PPS: they go into avcC, not into the samples;
 * a later SPS or PPS identical to them is dropped, a different one
 * refused. Written at once, each NAL unit after its 4-byte length.
 *
 * A refused sample changes nothing: the next may follow. A failed write
 * fails this call and every later one but cugl__mp4_finish's freeing.
 *
 * @errors CUGL_ERROR_INVALID_ARGUMENT: m or annexb NULL, size 0; no start
 *         code; pts not after the last sample's; the first sample not a
 *         key frame or without SPS and PPS; an SPS or PPS other than the
 *         first; `key` where there is no IDR slice or an IDR slice not
 *         marked `key`; no picture at all; a failed write (now or before).
 *         CUGL_ERROR_OUT_OF_MEMORY.
 */
cugl_status cugl__mp4_add(cugl__mp4 *m, const uint8_t *annexb, size_t size, int64_t pts,
                          bool key);

/*
 * The index: mdat's size, then moov (mvhd, trak: tkhd, mdia: mdhd, hdlr,
 * minf: vmhd, dinf, stbl: stsd avc1 with avcC, stts, stss, stsz, stsc, and
 * stco or, past 4 GiB, co64), then fflush. `end_pts`: where the last
 * sample ends (its duration is end_pts less its pts). Frees m whatever
 * happens; never closes f.
 *
 * @errors CUGL_ERROR_INVALID_ARGUMENT: m NULL; end_pts not after the last
 *         sample's pts, or by 2^32 ticks or more; a failed write (now or
 *         before). CUGL_ERROR_INVALID_STATE: no sample was added.
 *         CUGL_ERROR_OUT_OF_MEMORY.
 */
cugl_status cugl__mp4_finish(cugl__mp4 *m, int64_t end_pts);

/* Drop a recording that failed: frees m and writes nothing more. NULL:
 * nothing. */
void cugl__mp4_abort(cugl__mp4 *m);

#endif /* CUGL_APP_RECORD_MP4_H */
