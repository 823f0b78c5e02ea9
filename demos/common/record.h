/*
 * record.h - --record DIR: every frame as DIR/<name>-NNNNNN.png and, where
 * ffmpeg is on PATH, the same frames piped to it for DIR/<name>.mp4 (H.264,
 * 60 frames a second). Each file replaces an older one only once it is
 * whole (the PNGs as cugl_app_write_file does; the MP4 is written beside
 * its name and renamed when ffmpeg succeeds), so a failed run leaves the
 * last good recording. This form needs no GPU and no GL context (libpng
 * through libcugl-app), so the unit tests run it anywhere.
 *
 * --record FILE.mp4 or FILE.webm: the frames as a video file by libcugl-app's
 * recorder (cugl/app_record.h: H.264 or VP8, read back and encoded off the
 * render loop, every frame kept at 60 a second), written whole or not at all;
 * it reads the context's framebuffer itself.
 */
#ifndef CUGL_DEMO_RECORD_H
#define CUGL_DEMO_RECORD_H

#include <stdbool.h>
#include <stdio.h>

#include <cugl/app.h>
#include <cugl/cugl.h>

enum { DEMO_RECORD_PATH_MAX = 512 };

typedef struct demo_recorder {
    const char *program; /* messages start with it */
    const char *name;    /* the files' stem */
    const char *dir;     /* NULL: not recording */
    FILE *log;           /* what was written goes here (stdout); failures to stderr */
    FILE *ffmpeg;        /* NULL: no ffmpeg, or it stopped */
    int ffmpeg_width, ffmpeg_height; /* the size ffmpeg was started with */
    long recorded;                   /* frames written */
    char mp4[DEMO_RECORD_PATH_MAX];
    char mp4_partial[DEMO_RECORD_PATH_MAX + 32]; /* ffmpeg writes here; renamed when whole */
    const char *video_path;                      /* --record FILE.mp4|.webm; else NULL */
    void *video;                                 /* its cugl_app_recorder, where built */
} demo_recorder;

/**
 * Start recording the frames of `ctx` (current) into the video file at
 * `path`, in `codec` (a cugl_app_record_codec; 0: the file's) at `kbps`
 * (0: the recorder's default), the same frames into the same bytes where
 * `same_bytes` (cugl_app_recorder_desc's). Returns 0, or the exit status
 * after a message on stderr: 2 where the name, the codec or this build
 * cannot record it, 1 where it cannot be written.
 */
int demo_recorder_open_video(demo_recorder *r, const char *program, cugl_app_context *ctx,
                             const char *path, int codec, int kbps, bool same_bytes);

/** This frame (rendered, before present) into the video file. */
cugl_status demo_recorder_video_frame(demo_recorder *r);

/**
 * Start recording into `dir` (made if missing). Returns 0, or the exit
 * status after a message on stderr: 2 for a folder name too long, 1 when
 * the folder cannot be made.
 */
int demo_recorder_open(demo_recorder *r, const char *program, const char *name, const char *dir);

/**
 * Frame `frame` (RGBA8 rows top to bottom) as a numbered PNG, and into
 * ffmpeg: started with the first frame; a frame of another size ends the
 * MP4 there (the PNGs go on).
 * @errors as cugl_app_write_png.
 */
cugl_status demo_recorder_frame(demo_recorder *r, const uint8_t *rgba, int width, int height,
                                long frame);

/**
 * Close ffmpeg's pipe, or finish the video file, and say what was written.
 * Returns 0, or 1 where the video file could not be finished (said on
 * stderr). A recorder never opened: no-op.
 */
int demo_recorder_close(demo_recorder *r);

#endif /* CUGL_DEMO_RECORD_H */
