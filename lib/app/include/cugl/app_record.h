/**
 * @file cugl/app_record.h
 * The recorder: the frames a context renders, kept as a video file.
 *
 * Part of libcugl-app (cugl/app.h includes every part), where it was built
 * with a video encoder: H.264 by OpenH264 (Meson feature `serve_h264`,
 * Debian's libopenh264-dev) or VP8 and VP9 by libvpx (`serve_video`,
 * libvpx-dev).
 * Errors are cugl's: functions return cugl_status and leave a message in
 * cugl_last_error().
 *
 * A recorder is made over a context (a window or headless) and a file
 * name; each cugl_app_recorder_frame, called where the program's frame is
 * drawn and before cugl_app_context_present, keeps that frame. The frame is
 * copied on the GPU into a buffer of its own (scaled to the recording's size
 * where it differs) and read back once the copy is done, a frame or two
 * later, never waiting for it; a thread of the recorder's converts and
 * encodes it and writes the container, off the render loop. Where the
 * encoder falls behind by more than CUGL_APP_RECORD_QUEUE frames, a frame
 * is dropped (counted by cugl_app_recorder_counts) unless the recorder was
 * asked to keep every frame: then cugl_app_recorder_frame waits for it and
 * counts the time it waited.
 *
 * The container is the file name's: ".mp4" (H.264, ISO BMFF) or ".webm"
 * (VP8, or VP9 where asked: Matroska). Frame i is stamped i / fps seconds
 * by default (the fixed clock), or at the time it was kept (the wall
 * clock). With the fixed clock and `same_bytes`, a run with the same input
 * (as input replay gives) records the same bytes; the encoders then run
 * on fewer threads. The file is written beside its name as ".<name>.<pid>-<n>.tmp"
 * and renamed over it once cugl_app_recorder_close has written the index,
 * so a full disk, a failed write or a killed program leave no file that
 * looks complete, and a file already at the name stays as it was until
 * then; a symbolic link's target is what is replaced (as
 * cugl_app_write_file).
 */
#ifndef CUGL_APP_RECORD_H
#define CUGL_APP_RECORD_H

#include "cugl/app_context.h"

CUGL_BEGIN_DECLS

/** The recorder's limits. */
enum {
    /** Frames copied or encoding at once, at most: each a mapped buffer of
     * the recording's size, made at the first frame (8 x 8.3 MB at
     * 1920x1080, 8 x 33 MB at 3840x2160). */
    CUGL_APP_RECORD_QUEUE = 8,
    CUGL_APP_RECORD_MAX_SIZE = 8192,  /**< the largest width or height recorded */
    CUGL_APP_RECORD_MAX_KBPS = 1000000, /**< the highest bitrate, kbit/s (1 Gbit/s) */
};

/** The clock that stamps frames (cugl_app_recorder_desc.clock). */
typedef enum cugl_app_record_clock {
    /** Frame i at i / fps: the same frames give the same file. */
    CUGL_APP_RECORD_CLOCK_FIXED = 0,
    /** Each frame at the time cugl_app_recorder_frame kept it, from the
     * first's (a program that renders unevenly plays back as it ran). */
    CUGL_APP_RECORD_CLOCK_WALL,
} cugl_app_record_clock;

/** The video codec (cugl_app_recorder_desc.codec). */
typedef enum cugl_app_record_codec {
    /** The container's: H.264 in ".mp4", VP8 in ".webm". */
    CUGL_APP_RECORD_CODEC_DEFAULT = 0,
    CUGL_APP_RECORD_CODEC_H264, /**< H.264 (OpenH264, Constrained Baseline), in ".mp4" */
    CUGL_APP_RECORD_CODEC_VP8,  /**< VP8 (libvpx), in ".webm" */
    /** VP9 (libvpx, profile 0), in ".webm": about 3 dB more than VP8 at the
     * same bitrate, for about twice its encoding time a frame. */
    CUGL_APP_RECORD_CODEC_VP9,
} cugl_app_record_codec;

/** How to record (cugl_app_recorder_create); zero fields take their defaults. */
typedef struct cugl_app_recorder_desc {
    /** Frames a second: the fixed clock's rate, and the encoder's budget of
     * bits a frame (bitrate / fps). 0: 60. From 1 to 60. */
    double fps;
    /** The video's bitrate, kbit/s. 0: 0.1 bit a pixel a frame at fps
     * (1920x1080 at 60: 12.4 Mbit/s), at least 500. Up to
     * CUGL_APP_RECORD_MAX_KBPS. */
    int kbps;
    /** The recording's width; 0 (with height 0): the framebuffer's at the
     * first frame. Frames of another size are scaled to it (filtered, the
     * aspect not kept). Even: an odd width is rounded down (the codecs' 4:2:0
     * chroma). From 16 to CUGL_APP_RECORD_MAX_SIZE. */
    int width;
    /** The recording's height, as width (both set or neither). */
    int height;
    cugl_app_record_clock clock; /**< the default: CUGL_APP_RECORD_CLOCK_FIXED */
    /** Every frame kept: cugl_app_recorder_frame waits where the encoder is
     * CUGL_APP_RECORD_QUEUE frames behind, rather than drop the frame. */
    bool keep_every_frame;
    /** The codec: one the container holds (H.264 in ".mp4"; VP8 or VP9 in
     * ".webm"). The default: the container's. */
    cugl_app_record_codec codec;
    /** The same frames give the same bytes (with the fixed clock): the
     * encoders hold their speed, OpenH264 runs on one thread and VP9 on
     * tiles alone, as their other threads make other bytes from run to run.
     * Slower: on an H200's 16 cores H.264 encoded 1920x1080 in 22.8 ms a
     * frame so (dropping a quarter of 60 frames a second). Off: every
     * thread the encoders use. */
    bool same_bytes;
} cugl_app_recorder_desc;

/** What a recorder has done (cugl_app_recorder_counts). */
typedef struct cugl_app_record_counts {
    long kept;          /**< frames given to cugl_app_recorder_frame and kept */
    long written;       /**< frames encoded and written to the file */
    long dropped;       /**< frames dropped: the encoder was behind */
    long behind;        /**< frames kept and not yet written */
    double waited_ms;   /**< time cugl_app_recorder_frame waited for the encoder, in all */
    double encode_ms;   /**< the encoder thread's time a frame, on average (conversion included) */
    long long bytes;    /**< bytes written to the file so far */
} cugl_app_record_counts;

/** A recorder (opaque). */
typedef struct cugl_app_recorder cugl_app_recorder;

/**
 * Start recording `ctx`'s frames into the file at `path`, as `desc` says
 * (NULL: every default). The file is made at cugl_app_recorder_close; until
 * then what is written goes to a temporary file beside it.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL out, ctx or path; an empty
 *   path; a name that ends in neither ".mp4" nor ".webm"; fps, kbps, width
 *   or height out of range, or one of width and height set without the
 *   other; a clock that is no cugl_app_record_clock; a codec that is no
 *   cugl_app_record_codec, or one the container does not hold; a folder
 *   that does not exist, cannot be written or is no folder; a path that is
 *   a folder), CUGL_ERROR_NOT_SUPPORTED (the codec is not in this build:
 *   the message names the Meson feature and Debian package),
 *   CUGL_ERROR_OUT_OF_MEMORY.
 * @thread_safety The thread that uses the context, with it current.
 * @pointer_lifetime path and desc are read during the call only; ctx must
 *   outlive the recorder.
 * @param[out] out Receives the recorder (NULL on failure).
 * @param ctx The context whose frames are recorded.
 * @param path The video file: its name ends in ".mp4" or ".webm".
 * @param desc How to record, or NULL.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_recorder_create(cugl_app_recorder **out, cugl_app_context *ctx,
                                              const char *path,
                                              const cugl_app_recorder_desc *desc);

/**
 * Keep the frame just rendered into the context's framebuffer (call it
 * before cugl_app_context_present): its copy is started on the GPU, and the
 * copies of earlier frames that are done are handed to the encoder. Never
 * waits for the GPU's copy; waits for the encoder only where the recorder
 * keeps every frame and it is CUGL_APP_RECORD_QUEUE frames behind.
 * A frame of a minimised window (0 x 0) is not kept. After an error of the
 * encoder or the file (reported by the next call and by close) the
 * recorder keeps nothing more.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL; a write to the file failed: the
 *   message names the file and the reason), CUGL_ERROR_INVALID_STATE (the
 *   encoder failed, or an earlier call did: the message says so),
 *   CUGL_ERROR_OUT_OF_MEMORY, CUGL_ERROR_GL.
 * @thread_safety The thread that uses the recorder's context, with it current.
 * @param rec The recorder.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_recorder_frame(cugl_app_recorder *rec);

/**
 * What the recorder has done so far.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (NULL).
 * @thread_safety Any thread, while the recorder lives.
 * @param rec The recorder.
 * @param[out] counts Receives the counts.
 * @return CUGL_OK, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_recorder_counts(const cugl_app_recorder *rec,
                                              cugl_app_record_counts *counts);

/**
 * Finish: every frame kept is read back, encoded and written, the index
 * written, and the file renamed into place; then the recorder is freed,
 * whatever happened (the context current, for its GL buffers). Where any
 * of it failed, or no frame was kept, nothing is left at the path but what
 * was there, and no temporary file. NULL: no-op, CUGL_OK.
 * @errors CUGL_ERROR_INVALID_ARGUMENT (a write or the rename failed: the
 *   message names the file and the reason), CUGL_ERROR_INVALID_STATE (no
 *   frame was kept; the encoder failed), CUGL_ERROR_OUT_OF_MEMORY,
 *   CUGL_ERROR_GL.
 * @thread_safety The thread that uses the recorder's context, with it current.
 * @param rec The recorder, or NULL.
 * @return CUGL_OK where the file is whole at its path, or an error status (see Errors).
 */
CUGL_API cugl_status cugl_app_recorder_close(cugl_app_recorder *rec);

CUGL_END_DECLS

#endif /* CUGL_APP_RECORD_H */
