/*
 * reader.h - the recorder's tests' own reader of video files: an MP4 (an
 * ISO base media file, ISO/IEC 14496-12, carrying H.264 as ISO/IEC
 * 14496-15 says) or a WebM (Matroska's EBML, VP8 or VP9), its one video
 * track read from the bytes by the specifications, not by the muxers'
 * code, so that it catches the muxers' mistakes; its frames decoded where
 * asked, by OpenH264 and libvpx. What ffprobe and ffmpeg tell of a file,
 * where there are none.
 *
 * A file that breaks a rule the reader checks is refused with the fact
 * ("frame 12's sample runs past the end of the file (offset 4096, size
 * 900, the file 4500 bytes)"): a truncated file, a size past its parent,
 * a count the file cannot hold, a sample outside mdat, a key flag that is
 * not the frame's own, a decoder that refuses a frame. Nothing is read
 * outside the bytes given, and nothing is allocated that the file's size
 * does not bound (decoded pictures at most READER_DECODED_MAX bytes).
 */
#ifndef RECORD_READER_H
#define RECORD_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most bytes of decoded pictures one file may take. */
#define READER_DECODED_MAX ((size_t)1 << 30)

/* A video file's video track, read back. */
typedef struct reader_video {
    char codec[8];       /* "h264", "vp8" or "vp9" */
    int width, height;   /* the picture's, as the track describes it */
    int frames;
    double *pts;         /* each frame's time in seconds, in presentation order */
    bool *key;           /* whether each frame is a key frame (a sync sample) */
    double duration;     /* the track's, in seconds, as the file says it; 0 where it does not */
    /* Where decoded: every frame as packed I420 (Y, then U, then V, each
     * chroma plane (width + 1) / 2 x (height + 1) / 2), picture_size bytes
     * each, in presentation order: the bytes `ffmpeg -f rawvideo -pix_fmt
     * yuv420p` gives. Else NULL. */
    uint8_t *pictures;
    size_t picture_size;
} reader_video;

/*
 * Read the file at `path` into `out`, decoding every frame where `decode`.
 * Returns 0, or -1 with the reason in `why` (and `out` zeroed). Decoding
 * a codec this build has no decoder for fails, naming the package.
 * `out` is the caller's, freed by reader_free.
 */
int reader_open(reader_video *out, const char *path, bool decode, char *why, size_t why_size);

/* The same, of a file's `size` bytes in memory (only those are read). */
int reader_parse(reader_video *out, const uint8_t *bytes, size_t size, bool decode, char *why,
                 size_t why_size);

/* Free what reader_open gave and zero `v`; NULL or a zeroed one is nothing. */
void reader_free(reader_video *v);

/* The bytes of one w x h picture in packed I420. */
size_t reader_picture_size(int w, int h);

#endif /* RECORD_READER_H */
