/*
 * record.c - see record.h.
 */
#include "record.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cugl/app.h>

int demo_recorder_open(demo_recorder *r, const char *program, const char *name, const char *dir)
{
    *r = (demo_recorder){.program = program, .name = name, .log = stdout};
    /* Room for "<dir>/<name>-NNNNNN.png" and "<dir>/<name>.mp4". */
    if (strlen(dir) + strlen(name) + 24 > sizeof r->mp4) {
        fprintf(stderr, "%s: --record: the folder's name is longer than %zu bytes\n", program,
                sizeof r->mp4 - strlen(name) - 24);
        return 2;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: --record: cannot make the folder %s: %s\n", program, dir,
                strerror(errno));
        return 1;
    }
    r->dir = dir;
    return 0;
}

/* Whether `program` is an executable file in a folder of $PATH. */
static bool on_path(const char *program)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        char file[1024];
        if (n > 0 && snprintf(file, sizeof file, "%.*s/%s", (int)n, path, program) <
                         (int)sizeof file &&
            access(file, X_OK) == 0)
            return true;
        path = end ? end + 1 : NULL;
    }
    return false;
}

/* Shell-quote `s` into `out` ('...' with each ' as '\''). */
static bool quote(char *out, size_t size, const char *s)
{
    size_t n = 0;
    out[n++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : (char[]){*s, 0};
        size_t len = strlen(piece);
        if (n + len + 2 > size)
            return false;
        memcpy(out + n, piece, len);
        n += len;
    }
    out[n++] = '\'';
    out[n] = 0;
    return true;
}

/* "exit status N" or "signal N" of a pclose() status. */
static const char *exit_text(int status, char *buf, size_t size)
{
    if (status == -1)
        snprintf(buf, size, "no status");
    else if (WIFEXITED(status))
        snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "signal %d", WTERMSIG(status));
    else
        snprintf(buf, size, "status %d", status);
    return buf;
}

/* Start ffmpeg reading raw RGBA frames of this size from a pipe. */
static void start_ffmpeg(demo_recorder *r, int width, int height)
{
    char target[sizeof r->mp4_partial + 8], out[2 * sizeof target], cmd[3 * sizeof target];
    snprintf(r->mp4, sizeof r->mp4, "%s/%s.mp4", r->dir, r->name);
    snprintf(r->mp4_partial, sizeof r->mp4_partial, "%s/.%s.mp4.%ld.tmp", r->dir, r->name,
             (long)getpid());
    /* "file:" so that ffmpeg takes no name for an option or a protocol. */
    snprintf(target, sizeof target, "file:%s", r->mp4_partial);
    if (!quote(out, sizeof out, target)) {
        fprintf(stderr, "%s: --record: no MP4: the folder's name is too long to pass to ffmpeg\n",
                r->program);
        return;
    }
    /* Even sizes for yuv420p; frames arrive top row first. */
    snprintf(cmd, sizeof cmd,
             "ffmpeg -y -loglevel error -f rawvideo -pixel_format rgba -video_size %dx%d "
             "-framerate 60 -i - -vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' -pix_fmt yuv420p -f mp4 %s",
             width, height, out);
    signal(SIGPIPE, SIG_IGN); /* a failing ffmpeg must not kill the demo */
    r->ffmpeg = popen(cmd, "w");
    if (!r->ffmpeg)
        fprintf(stderr, "%s: --record: no MP4: cannot start ffmpeg: %s\n", r->program,
                strerror(errno));
    r->ffmpeg_width = width;
    r->ffmpeg_height = height;
}

/* Wait for ffmpeg; its MP4 replaces the old one only where it succeeded.
 * Returns pclose's status. */
static int finish_mp4(demo_recorder *r)
{
    int rc = pclose(r->ffmpeg);
    r->ffmpeg = NULL;
    if (rc == 0 && rename(r->mp4_partial, r->mp4) != 0) {
        fprintf(stderr, "%s: --record: cannot put the MP4 in place as %s: %s\n", r->program,
                r->mp4, strerror(errno));
        rc = -1;
    }
    unlink(r->mp4_partial); /* where it was not renamed */
    return rc;
}

cugl_status demo_recorder_frame(demo_recorder *r, const uint8_t *rgba, int width, int height,
                                long frame)
{
    char file[DEMO_RECORD_PATH_MAX + 16]; /* the length was checked at open */
    snprintf(file, sizeof file, "%s/%s-%06ld.png", r->dir, r->name, frame);
    cugl_status st = cugl_app_write_png(file, rgba, width, height);
    if (st != CUGL_OK)
        return st;
    if (r->recorded++ == 0 && on_path("ffmpeg"))
        start_ffmpeg(r, width, height);
    if (r->ffmpeg && (width != r->ffmpeg_width || height != r->ffmpeg_height)) {
        char why[48];
        int rc = finish_mp4(r);
        if (rc == 0)
            fprintf(r->log, "%s: --record: the frame size changed; %s ends before frame %ld\n",
                   r->program, r->mp4, frame);
        else
            fprintf(stderr, "%s: --record: the frame size changed, and ffmpeg failed (%s)\n",
                    r->program, exit_text(rc, why, sizeof why));
    }
    size_t size = (size_t)width * (size_t)height * 4;
    if (r->ffmpeg && fwrite(rgba, 1, size, r->ffmpeg) != size) {
        char why[48];
        int rc = finish_mp4(r);
        fprintf(stderr, "%s: --record: ffmpeg stopped taking frames (%s); no MP4\n", r->program,
                exit_text(rc, why, sizeof why));
    }
    return CUGL_OK;
}

#if CUGL_APP_HAS_RECORD
int demo_recorder_open_video(demo_recorder *r, const char *program, cugl_app_context *ctx,
                             const char *path, int codec, int kbps, bool same_bytes)
{
    *r = (demo_recorder){.program = program, .log = stdout, .video_path = path};
    cugl_app_recorder *rec = NULL;
    /* The demos step 1/60 s a frame when they record: every frame kept. */
    cugl_app_recorder_desc desc = {.keep_every_frame = true,
                                   .codec = (cugl_app_record_codec)codec,
                                   .kbps = kbps,
                                   .same_bytes = same_bytes};
    cugl_status st = cugl_app_recorder_create(&rec, ctx, path, &desc);
    if (st != CUGL_OK) {
        fprintf(stderr, "%s: --record: %s\n", program, cugl_last_error());
        return st == CUGL_ERROR_NOT_SUPPORTED ? 2 : 1;
    }
    r->video = rec;
    return 0;
}

cugl_status demo_recorder_video_frame(demo_recorder *r)
{
    return cugl_app_recorder_frame(r->video);
}

/* Finish the video file; 0, or 1 after a message. */
static int close_video(demo_recorder *r)
{
    cugl_app_recorder *rec = r->video;
    r->video = NULL;
    /* Before close, which writes the frames still in flight: every frame
     * kept is written once it succeeds; the file's size after. */
    cugl_app_record_counts c = {0};
    cugl_app_recorder_counts(rec, &c);
    if (cugl_app_recorder_close(rec) != CUGL_OK) {
        fprintf(stderr, "%s: --record: %s\n", r->program, cugl_last_error());
        return 1;
    }
    struct stat st;
    double kb = stat(r->video_path, &st) == 0 ? (double)st.st_size / 1e3 : 0.0;
    fprintf(r->log,
            "%s: recorded %ld frames as %s (%.0f kB; the encoder %.2f ms a frame on its thread, "
            "the render loop waited %.0f ms for it in all)\n",
            r->program, c.kept, r->video_path, kb, c.encode_ms, c.waited_ms);
    return 0;
}
#else
int demo_recorder_open_video(demo_recorder *r, const char *program, cugl_app_context *ctx,
                             const char *path, int codec, int kbps, bool same_bytes)
{
    (void)ctx;
    (void)codec;
    (void)kbps;
    (void)same_bytes;
    *r = (demo_recorder){.program = program, .log = stdout};
    fprintf(stderr,
            "%s: --record %s: this build has no recorder (it needs OpenH264 or libvpx: "
            "Meson features serve_h264, serve_video); --record DIR writes PNG files\n",
            program, path);
    return 2;
}

cugl_status demo_recorder_video_frame(demo_recorder *r)
{
    (void)r;
    return CUGL_ERROR_NOT_SUPPORTED;
}

static int close_video(demo_recorder *r)
{
    (void)r;
    return 0;
}
#endif

int demo_recorder_close(demo_recorder *r)
{
    if (r->video)
        return close_video(r);
    if (!r->dir)
        return 0;
    if (r->recorded > 0)
        fprintf(r->log, "%s: recorded %ld frame%s as %s/%s-NNNNNN.png\n", r->program, r->recorded,
               r->recorded == 1 ? "" : "s", r->dir, r->name);
    if (r->ffmpeg) {
        char why[48];
        int rc = finish_mp4(r);
        if (rc == 0)
            fprintf(r->log, "%s: and as %s\n", r->program, r->mp4);
        else
            fprintf(stderr, "%s: ffmpeg failed (%s); no MP4\n", r->program,
                    exit_text(rc, why, sizeof why));
    } else if (r->recorded > 0 && !on_path("ffmpeg")) {
        fprintf(r->log, "%s: no MP4: ffmpeg is not installed\n", r->program);
    }
    r->dir = NULL;
    return 0;
}
