/*
 * test_mp4.c - the recorder's MP4 muxer (lib/app/record/mp4.c): a moving
 * picture encoded by OpenH264 and muxed plays: the tests' own reader
 * (reader.h) counts its frames, reads its size, codec, each frame's time
 * and key flag, and decodes every frame close to the source; ffprobe and
 * ffmpeg, where they are, read the same and agree. The boxes read back
 * hold what was given; the reader refuses an index broken each way a
 * muxer could break it, and damaged copies; the same input makes the same
 * bytes; bad input, a pipe, a file that is not empty and a full disk are
 * refused with their messages; an MP4 past 4 GiB (written to a FILE that
 * keeps no bytes) indexes its samples with co64 and its durations with
 * 64-bit fields.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>

#include "cugl_test.h"
#include "mp4.h"
#include "readback.h"

#if TEST_MP4_OPENH264
#include <wels/codec_api.h>
#endif

enum { W = 320, H = 240, FPS = 60, FRAMES = 64, SECOND_KEY = 32 };
enum { PICTURE = W * H * 3 / 2 };
#define BAD CUGL_ERROR_INVALID_ARGUMENT

/* --- what the cases share ----------------------------------------------- */

/* A case that cannot run here says why; where CUGL_TEST_NO_SKIP is set
 * (a machine with every tool) that is a failure. */
static void skip_because(const char *why)
{
    if (getenv("CUGL_TEST_NO_SKIP"))
        fail_msg("would skip, but CUGL_TEST_NO_SKIP is set: %s", why);
    printf("# skipped: %s\n", why);
    skip();
}

static const char *tool(const char *name)
{
    const char *p = getenv(name);
    return p && p[0] ? p : NULL;
}

/* A file's bytes, read whole. */
static uint8_t *slurp(FILE *f, size_t *size)
{
    assert_int_equal(fflush(f), 0);
    assert_int_equal(fseeko(f, 0, SEEK_END), 0);
    off_t n = ftello(f);
    assert_true(n >= 0);
    rewind(f);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    *size = (size_t)n;
    return p;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) << 32 | rd32(p + 4); }

/* The box of `type` among those in [p, p + size); its body and its size. */
static const uint8_t *find_box(const uint8_t *p, size_t size, const char *type, size_t *body)
{
    for (size_t at = 0; at + 8 <= size;) {
        uint64_t n = rd32(p + at), head = 8;
        if (n == 1) {
            n = rd64(p + at + 8);
            head = 16;
        }
        assert_true(n >= head && n <= size - at);
        if (memcmp(p + at + 4, type, 4) == 0) {
            *body = (size_t)(n - head);
            return p + at + head;
        }
        at += (size_t)n;
    }
    fail_msg("no %.4s box", type);
    return NULL;
}

/* The box at a path of types ("moov/trak/mdia"), from the file's top. */
static const uint8_t *box_at(const uint8_t *file, size_t size, const char *path, size_t *body)
{
    const uint8_t *p = file;
    *body = size;
    for (const char *t = path;; t += 5) {
        p = find_box(p, *body, t, body);
        if (!t[4])
            return p;
    }
}

#define STBL "moov/trak/mdia/minf/stbl/"

/* --- NAL units made by hand: the muxer reads no slice ------------------- */

#define SC4 0, 0, 0, 1
#define SC3 0, 0, 1
#define SPS 0x67, 0x42, 0xc0, 0x1e, 0xab
#define PPS 0x68, 0xce, 0x3c, 0x80
#define IDR 0x65, 0x88, 0x84, 0x21
#define P_SLICE 0x41, 0x9a, 0x02, 0x17
static const uint8_t key_au[] = {SC4, SPS, SC4, PPS, SC3, IDR};
static const uint8_t idr_au[] = {SC3, IDR};
static const uint8_t p_au[] = {SC3, P_SLICE};
static const uint8_t pps_idr_au[] = {SC4, PPS, SC3, IDR};
static const uint8_t sps_idr_au[] = {SC4, SPS, SC3, IDR};
static const uint8_t params_au[] = {SC4, SPS, SC4, PPS};
static const uint8_t other_sps_au[] = {SC4, 0x67, 0x42, 0xc0, 0x1f, 0xab, SC3, IDR};
static const uint8_t other_pps_au[] = {SC4, 0x68, 0xce, 0x3c, 0x81, SC3, IDR};
static const uint8_t bare_au[] = {IDR};

/* --- bad input: each call, its status and its exact message -------------- */

/* cugl__mp4_open on a new temporary file (or none), its muxer dropped. */
static cugl_status try_open(int w, int h, uint32_t timescale, const char *who, bool out,
                            bool file)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    cugl_status st = cugl__mp4_open(out ? &m : NULL, file ? f : NULL, w, h, timescale, who);
    cugl__mp4_abort(m);
    fclose(f);
    return st;
}

/* `au` added to a new muxer, after `first` (a key frame at pts 0) where
 * there is one: the status of that add. */
static cugl_status add_to(const uint8_t *first, size_t first_size, const uint8_t *au, size_t size,
                          int64_t pts, bool key)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, W, H, FPS, "rec"));
    if (first)
        assert_ok(cugl__mp4_add(m, first, first_size, 0, true));
    cugl_status st = cugl__mp4_add(m, au, size, pts, key);
    cugl__mp4_abort(m);
    fclose(f);
    return st;
}
#define add_first(au, size, pts, key) add_to(NULL, 0, au, size, pts, key)
#define add_second(au, pts, key) add_to(key_au, sizeof key_au, au, sizeof au, pts, key)

/* cugl__mp4_finish after `samples` key frames at pts 0, 1, ... */
static cugl_status finish_after(int samples, int64_t end_pts)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, W, H, FPS, "rec"));
    for (int i = 0; i < samples; i++)
        assert_ok(cugl__mp4_add(m, key_au, sizeof key_au, i, true));
    cugl_status st = cugl__mp4_finish(m, end_pts);
    fclose(f);
    return st;
}

#define ANNEX_B "Annex B wanted"
#define AVCC "avcC needs the SPS and the PPS"
#define CASES(X)                                                                                 \
    X(open_no_out, try_open(W, H, FPS, "rec", false, true), BAD, "rec: out is NULL")            \
    X(open_no_file, try_open(W, H, FPS, "rec", true, false), BAD, "rec: f is NULL")             \
    X(open_no_who, try_open(W, H, FPS, NULL, true, true), BAD, "cugl__mp4_open: who is NULL")   \
    X(open_width_0, try_open(0, H, FPS, "rec", true, true), BAD,                                \
      "rec: a 0 x 240 picture: each side must be 1 to 16384")                                   \
    X(open_width_negative, try_open(-320, H, FPS, "rec", true, true), BAD,                      \
      "rec: a -320 x 240 picture: each side must be 1 to 16384")                                \
    X(open_height_past, try_open(W, 16385, FPS, "rec", true, true), BAD,                        \
      "rec: a 320 x 16385 picture: each side must be 1 to 16384")                               \
    X(open_timescale_0, try_open(W, H, 0, "rec", true, true), BAD,                              \
      "rec: timescale is 0: timestamps need ticks a second")                                    \
    X(add_no_muxer, cugl__mp4_add(NULL, key_au, sizeof key_au, 0, true), BAD,                   \
      "cugl__mp4_add: m is NULL")                                                               \
    X(add_null, add_first(NULL, 8, 0, true), BAD, "rec: sample 0 is NULL")                      \
    X(add_zero_size, add_first(key_au, 0, 0, true), BAD, "rec: sample 0 is empty (0 bytes)")    \
    X(add_no_start_code, add_first(bare_au, sizeof bare_au, 0, true), BAD,                      \
      "rec: sample 0 (4 bytes) does not begin with a start code: " ANNEX_B)                     \
    X(add_first_not_key, add_first(key_au, sizeof key_au, 0, false), BAD,                       \
      "rec: the first sample is not a key frame: an MP4 starts with an IDR picture and its "    \
      "SPS and PPS")                                                                            \
    X(add_first_no_sps, add_first(pps_idr_au, sizeof pps_idr_au, 0, true), BAD,                 \
      "rec: the first sample has no SPS: " AVCC)                                                \
    X(add_first_no_pps, add_first(sps_idr_au, sizeof sps_idr_au, 0, true), BAD,                 \
      "rec: the first sample has no PPS: " AVCC)                                                \
    X(add_first_bare, add_first(idr_au, sizeof idr_au, 0, true), BAD,                           \
      "rec: the first sample has no SPS and no PPS: " AVCC)                                     \
    X(add_no_picture, add_first(params_au, sizeof params_au, 0, true), BAD,                     \
      "rec: sample 0 has no picture (no slice NAL unit)")                                       \
    X(add_key_without_idr, add_second(p_au, 1, true), BAD,                                      \
      "rec: sample 1 is marked key but has no IDR slice")                                       \
    X(add_idr_not_key, add_second(idr_au, 1, false), BAD,                                       \
      "rec: sample 1 has an IDR slice but is not marked key")                                   \
    X(add_same_pts, add_second(p_au, 0, false), BAD,                                            \
      "rec: pts 0 is not after the last sample's pts, 0")                                       \
    X(add_earlier_pts, add_second(p_au, -1, false), BAD,                                        \
      "rec: pts -1 is not after the last sample's pts, 0")                                      \
    X(add_pts_too_far, add_second(p_au, 4294967296, false), BAD,                                \
      "rec: pts 4294967296 is 4294967296 ticks after the last sample's: an MP4's durations "    \
      "hold at most 2^32 - 1")                                                                  \
    X(add_other_sps, add_second(other_sps_au, 1, true), BAD,                                    \
      "rec: sample 1's SPS (5 bytes) is not the first's (5 bytes): the stream's parameters "    \
      "cannot change within one MP4")                                                \
    X(add_other_pps, add_second(other_pps_au, 1, true), BAD,                                    \
      "rec: sample 1's PPS (4 bytes) is not the first's (4 bytes): the stream's parameters "    \
      "cannot change within one MP4")                                                \
    X(finish_no_muxer, cugl__mp4_finish(NULL, 1), BAD, "cugl__mp4_finish: m is NULL")           \
    X(finish_no_sample, finish_after(0, 1), CUGL_ERROR_INVALID_STATE,                           \
      "rec: no sample was added: an MP4 needs one at least")                                    \
    X(finish_at_last_pts, finish_after(2, 1), BAD,                                              \
      "rec: end_pts 1 is not after the last sample's pts, 1")                                   \
    X(finish_too_far, finish_after(1, 4294967296), BAD,                                         \
      "rec: end_pts 4294967296 is 4294967296 ticks after the last sample's: an MP4's "          \
      "durations hold at most 2^32 - 1")

CASES(CUGL_TEST_CASE)

static void bad_input_is_refused(void **state)
{
    (void)state;
    static const cugl_test_case cases[] = {CASES(CUGL_TEST_ROW)};
    cugl_test_run_cases(cases, sizeof cases / sizeof cases[0], NULL);
    cugl__mp4_abort(NULL); /* nothing, as free(NULL) */
}

/* A refused sample changes nothing; a repeated SPS and PPS are dropped; the
 * start codes (3 and 4 bytes) become 4-byte lengths; the boxes read back. */
static void samples_and_boxes_hold_what_was_given(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, 1920, 1080, 90000, "rec"));
    assert_ok(cugl__mp4_add(m, key_au, sizeof key_au, 1000, true));
    assert_status(cugl__mp4_add(m, p_au, sizeof p_au, 1000, false), BAD);
    assert_ok(cugl__mp4_add(m, p_au, sizeof p_au, 2500, false));
    assert_ok(cugl__mp4_add(m, key_au, sizeof key_au, 4000, true));
    assert_ok(cugl__mp4_finish(m, 5500));
    size_t size;
    uint8_t *file = slurp(f, &size);
    fclose(f);
    static const uint8_t head[] = {0, 0, 0, 32, 'f', 't', 'y', 'p', 'i', 's', 'o', 'm', 0, 0,
                                   2, 0, 'i', 's', 'o', 'm', 'i', 's', 'o', '2', 'a', 'v', 'c',
                                   '1', 'm', 'p', '4', '1', 0, 0, 0, 1, 'm', 'd', 'a', 't'};
    static const uint8_t samples[] = {0, 0, 0, 4, IDR, 0, 0, 0, 4, P_SLICE, 0, 0, 0, 4, IDR};
    assert_memory_equal(file, head, sizeof head);
    assert_int_equal(rd64(file + 40), 16 + sizeof samples);
    assert_memory_equal(file + 48, samples, sizeof samples);
    size_t n, moov_at = 48 + sizeof samples;
    assert_memory_equal(file + moov_at + 4, "moov", 4);
    assert_int_equal(moov_at + rd32(file + moov_at), size); /* moov ends the file */
    const uint8_t *b = box_at(file, size, "moov/mvhd", &n);
    assert_int_equal(rd32(b), 0);                /* version 0, no flags */
    assert_int_equal(rd64(b + 4), 0);            /* created and modified at 0 */
    assert_int_equal(rd32(b + 12), 90000);       /* timescale */
    assert_int_equal(rd32(b + 16), 4500);        /* duration: 5500 - 1000 */
    b = box_at(file, size, "moov/trak/tkhd", &n);
    assert_int_equal(rd32(b), 3);                /* enabled, in the movie */
    assert_int_equal(rd32(b + 12), 1);           /* track 1 */
    assert_int_equal(rd32(b + 20), 4500);
    assert_int_equal(rd32(b + n - 8), 1920u << 16);
    assert_int_equal(rd32(b + n - 4), 1080u << 16);
    b = box_at(file, size, "moov/trak/mdia/mdhd", &n);
    assert_int_equal(rd32(b + 12), 90000);
    assert_int_equal(rd32(b + 16), 4500);
    b = box_at(file, size, "moov/trak/mdia/hdlr", &n);
    assert_memory_equal(b + 8, "vide", 4);
    b = box_at(file, size, STBL "stsd", &n);
    assert_int_equal(rd32(b + 4), 1);
    assert_memory_equal(b + 12, "avc1", 4);
    assert_int_equal(rd32(b + 8 + 8 + 24) >> 16, 1920);
    assert_int_equal(rd32(b + 8 + 8 + 24) & 0xffff, 1080);
    static const uint8_t avcc[] = {0, 0, 0, 8 + 6 + 2 + 5 + 1 + 2 + 4, 'a', 'v', 'c', 'C',
                                   1, 0x42, 0xc0, 0x1e, 0xff, 0xe1, 0, 5, SPS, 1, 0, 4, PPS};
    assert_int_equal(n, 8 + 8 + 78 + sizeof avcc);
    assert_memory_equal(b + 8 + 8 + 78, avcc, sizeof avcc);
    static const uint8_t stts[] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0x05, 0xdc};
    b = box_at(file, size, STBL "stts", &n);
    assert_int_equal(n, sizeof stts);
    assert_memory_equal(b, stts, n); /* three samples of 1500 ticks */
    static const uint8_t stss[] = {0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3};
    b = box_at(file, size, STBL "stss", &n);
    assert_int_equal(n, sizeof stss);
    assert_memory_equal(b, stss, n);
    static const uint8_t stsz[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 8,
                                   0, 0, 0, 8, 0, 0, 0, 8};
    b = box_at(file, size, STBL "stsz", &n);
    assert_int_equal(n, sizeof stsz);
    assert_memory_equal(b, stsz, n);
    static const uint8_t stco[] = {0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 48, 0, 0, 0, 56,
                                   0, 0, 0, 64};
    b = box_at(file, size, STBL "stco", &n);
    assert_int_equal(n, sizeof stco);
    assert_memory_equal(b, stco, n);
    free(file);
}

/* --- files that cannot take an MP4 --------------------------------------- */

static void refused_file(FILE *f, const char *message)
{
    static char sentinel;
    cugl__mp4 *m = (cugl__mp4 *)(void *)&sentinel; /* set to NULL on failure */
    assert_status(cugl__mp4_open(&m, f, W, H, FPS, "rec"), BAD);
    assert_null(m);
    assert_string_equal(cugl_last_error(), message);
}

static void unseekable_and_used_files_are_refused(void **state)
{
    (void)state;
    static const char pipe_message[] =
        "rec: the MP4's file is not seekable (Illegal seek): its index is written last and "
        "mdat's size patched";
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    FILE *w = fdopen(fds[1], "wb");
    assert_non_null(w);
    refused_file(w, pipe_message);
    fclose(w);
    close(fds[0]);
    FILE *p = popen("cat > /dev/null", "w");
    assert_non_null(p);
    refused_file(p, pipe_message);
    assert_int_equal(pclose(p), 0);
    FILE *used = tmpfile();
    assert_non_null(used);
    assert_int_equal(fputs("x", used), 1);
    refused_file(used, "rec: the MP4's file is not empty (1 bytes): its offsets count from the "
                       "file's start");
    fclose(used);
}

/* /dev/full: every write fails with ENOSPC. Unbuffered, open fails; then
 * a large sample fails its add and every later call; then small samples
 * in the buffer fail at finish. Freed every time (LSan's to tell). */
static void a_full_disk_fails_with_its_reason(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "wb");
    if (!f)
        skip_because("no /dev/full");
    assert_int_equal(setvbuf(f, NULL, _IONBF, 0), 0);
    refused_file(f, "rec: writing the MP4 failed at ftyp (after 0 bytes): No space left on device");
    fclose(f);

    f = fopen("/dev/full", "wb");
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, W, H, FPS, "rec"));
    size_t big = sizeof key_au + 100000;
    uint8_t *au = malloc(big);
    assert_non_null(au);
    memcpy(au, key_au, sizeof key_au);
    memset(au + sizeof key_au, 0xab, big - sizeof key_au);
    assert_status(cugl__mp4_add(m, au, big, 0, true), BAD);
    assert_string_equal(cugl_last_error(),
                        "rec: writing the MP4 failed at sample 0 (after 52 bytes): No space left "
                        "on device");
    assert_status(cugl__mp4_add(m, p_au, sizeof p_au, 1, false), BAD);
    assert_string_equal(cugl_last_error(),
                        "rec: an earlier write failed: writing the MP4 failed at sample 0 (after "
                        "52 bytes): No space left on device");
    assert_status(cugl__mp4_finish(m, 2), BAD);
    assert_string_equal(cugl_last_error(),
                        "rec: an earlier write failed: writing the MP4 failed at sample 0 (after "
                        "52 bytes): No space left on device");
    free(au);
    fclose(f);

    f = fopen("/dev/full", "wb");
    assert_non_null(f);
    assert_ok(cugl__mp4_open(&m, f, W, H, FPS, "rec"));
    assert_ok(cugl__mp4_add(m, key_au, sizeof key_au, 0, true));
    assert_status(cugl__mp4_finish(m, 1), BAD);
    assert_string_equal(cugl_last_error(),
                        "rec: writing the MP4 failed at mdat's size (after 56 bytes): No space "
                        "left on device");
    fclose(f);
}

/* --- past 4 GiB, to a FILE that counts bytes and keeps few -------------- */

/* The bytes written after `keep` is set (moov, mdat's size), where they
 * went; the rest only counted. */
typedef struct counting {
    uint64_t pos, end;
    bool keep;
    uint8_t size_field[8]; /* what was written at mdat's size */
    uint64_t tail_at;      /* where the first kept write past it went */
    uint8_t *tail;
    size_t tail_size;
} counting;

static ssize_t counting_write(void *cookie, const char *p, size_t n)
{
    counting *c = cookie;
    if (c->keep && c->pos == 40 && n >= 8) {
        memcpy(c->size_field, p, 8);
    } else if (c->keep) {
        if (!c->tail)
            c->tail_at = c->pos;
        assert_int_equal(c->pos, c->tail_at + c->tail_size); /* in order */
        c->tail = realloc(c->tail, c->tail_size + n);
        assert_non_null(c->tail);
        memcpy(c->tail + c->tail_size, p, n);
        c->tail_size += n;
    }
    c->pos += n;
    c->end = c->pos > c->end ? c->pos : c->end;
    return (ssize_t)n;
}

static int counting_seek(void *cookie, off64_t *to, int whence)
{
    counting *c = cookie;
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)c->pos : (int64_t)c->end;
    c->pos = (uint64_t)(base + *to);
    *to = (off64_t)c->pos;
    return 0;
}

static void past_4_gib_offsets_go_to_co64(void **state)
{
    (void)state;
    enum { SAMPLES = 18 };
    const size_t payload = 256u << 20; /* a sample of 256 MiB and 8 bytes */
    uint8_t *au = malloc(sizeof key_au + payload);
    assert_non_null(au);
    memcpy(au, key_au, sizeof key_au);
    memset(au + sizeof key_au, 0xab, payload); /* no start code in it */
    counting c = {0};
    FILE *f = fopencookie(&c, "w", (cookie_io_functions_t){.write = counting_write,
                                                           .seek = counting_seek});
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, W, H, 1, "rec"));
    /* 4e9 ticks a sample: the movie's duration passes 2^32 too. */
    const int64_t step = 4000000000;
    for (int i = 0; i < SAMPLES; i++)
        assert_ok(cugl__mp4_add(m, i == 0 ? au : au + sizeof key_au - sizeof idr_au,
                                i == 0 ? sizeof key_au + payload : sizeof idr_au + payload,
                                i * step, true));
    free(au);
    assert_int_equal(fflush(f), 0);
    c.keep = true;
    assert_ok(cugl__mp4_finish(m, SAMPLES * step));
    fclose(f);
    const uint64_t sample = 8 + payload;
    assert_int_equal(rd64(c.size_field), 16 + SAMPLES * sample);
    assert_int_equal(c.tail_at, 48 + SAMPLES * sample);
    assert_true(c.tail_at > UINT32_MAX);
    size_t n;
    const uint8_t *b = box_at(c.tail, c.tail_size, "moov/mvhd", &n);
    assert_int_equal(b[0], 1); /* version 1: 64-bit times */
    assert_int_equal(rd32(b + 20), 1);
    assert_int_equal(rd64(b + 24), SAMPLES * step);
    b = box_at(c.tail, c.tail_size, "moov/trak/tkhd", &n);
    assert_int_equal(b[0], 1);
    assert_int_equal(rd64(b + 28), SAMPLES * step);
    b = box_at(c.tail, c.tail_size, "moov/trak/mdia/mdhd", &n);
    assert_int_equal(rd64(b + 24), SAMPLES * step);
    b = box_at(c.tail, c.tail_size, STBL "co64", &n);
    assert_int_equal(rd32(b + 4), SAMPLES);
    for (int i = 0; i < SAMPLES; i++)
        assert_int_equal(rd64(b + 8 + 8 * i), 48 + i * sample);
    b = box_at(c.tail, c.tail_size, STBL "stsz", &n);
    for (int i = 0; i < SAMPLES; i++)
        assert_int_equal(rd32(b + 12 + 4 * i), sample);
    free(c.tail);
}

/* --- a real stream: OpenH264's, read back ---------------------------------- */

typedef struct stream {
    uint8_t *au[FRAMES];
    size_t size[FRAMES];
    bool key[FRAMES];
    uint8_t *source; /* FRAMES pictures, I420 */
    uint8_t sps[64];
    size_t sps_size;
} stream;

#if TEST_MP4_OPENH264
/* Frame i of the animation: a ramp that moves 3 pixels a frame and a
 * checker of 4-pixel squares that moves one, colour ramps in chroma. */
static void draw(uint8_t *pic, int i)
{
    uint8_t *u = pic + W * H, *v = u + W * H / 4;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int ramp = ((x + 3 * i) * 2 + y) % 256;
            int check = (((x + i) >> 2) ^ ((y + i / 2) >> 2)) & 1;
            pic[y * W + x] = (uint8_t)(32 + ramp * 150 / 255 + check * 40);
        }
    for (int y = 0; y < H / 2; y++)
        for (int x = 0; x < W / 2; x++) {
            u[y * W / 2 + x] = (uint8_t)(64 + (x * 2 + i) % 128);
            v[y * W / 2 + x] = (uint8_t)(64 + (y * 2 + 2 * i) % 128);
        }
}

static ISVCEncoder *make_encoder(void)
{
    ISVCEncoder *e = NULL;
    if (WelsCreateSVCEncoder(&e) != 0 || !e)
        fail_msg("OpenH264 cannot make an encoder");
    int quiet = WELS_LOG_QUIET;
    (*e)->SetOption(e, ENCODER_OPTION_TRACE_LEVEL, &quiet);
    SEncParamExt p;
    (*e)->GetDefaultParams(e, &p);
    /* As the frame server's (serve_h264.c): Constrained Baseline, one frame
     * in and one out, IDR frames when asked; two slices, so that an access
     * unit has several NAL units; a generous rate. */
    p.iUsageType = CAMERA_VIDEO_REAL_TIME;
    p.iPicWidth = W;
    p.iPicHeight = H;
    p.iTargetBitrate = 8000000;
    p.iMaxBitrate = UNSPECIFIED_BIT_RATE;
    p.iRCMode = RC_BITRATE_MODE;
    p.fMaxFrameRate = FPS;
    p.bEnableFrameSkip = false;
    p.iTemporalLayerNum = 1;
    p.iSpatialLayerNum = 1;
    p.uiIntraPeriod = 0;
    p.eSpsPpsIdStrategy = CONSTANT_ID;
    p.iEntropyCodingModeFlag = 0;
    p.iNumRefFrame = 1;
    p.bEnableSceneChangeDetect = false;
    p.iMultipleThreadIdc = 1;
    SSpatialLayerConfig *l = &p.sSpatialLayers[0];
    l->iVideoWidth = W;
    l->iVideoHeight = H;
    l->fFrameRate = FPS;
    l->iSpatialBitrate = p.iTargetBitrate;
    l->iMaxSpatialBitrate = UNSPECIFIED_BIT_RATE;
    l->uiProfileIdc = PRO_BASELINE;
    l->uiLevelIdc = LEVEL_UNKNOWN;
    l->sSliceArgument.uiSliceMode = SM_FIXEDSLCNUM_SLICE;
    l->sSliceArgument.uiSliceNum = 2;
    int format = videoFormatI420;
    if ((*e)->InitializeExt(e, &p) != cmResultSuccess ||
        (*e)->SetOption(e, ENCODER_OPTION_DATAFORMAT, &format) != cmResultSuccess)
        fail_msg("OpenH264 cannot start a %d x %d encoder", W, H);
    return e;
}

static void encode(stream *s)
{
    ISVCEncoder *e = make_encoder();
    for (int i = 0; i < FRAMES; i++) {
        uint8_t *pic = s->source + (size_t)i * PICTURE;
        draw(pic, i);
        if (i == SECOND_KEY)
            (*e)->ForceIntraFrame(e, true);
        SSourcePicture in = {.iColorFormat = videoFormatI420, .iPicWidth = W, .iPicHeight = H,
                             .uiTimeStamp = i * 1000 / FPS,
                             .pData = {pic, pic + W * H, pic + W * H * 5 / 4},
                             .iStride = {W, W / 2, W / 2}};
        SFrameBSInfo info;
        memset(&info, 0, sizeof info);
        assert_int_equal((*e)->EncodeFrame(e, &in, &info), cmResultSuccess);
        assert_true(info.iFrameSizeInBytes > 0);
        s->au[i] = malloc((size_t)info.iFrameSizeInBytes);
        assert_non_null(s->au[i]);
        for (int k = 0; k < info.iLayerNum; k++) {
            const SLayerBSInfo *layer = &info.sLayerInfo[k];
            for (int n = 0; n < layer->iNalCount; n++) {
                const uint8_t *nal = layer->pBsBuf;
                for (int j = 0; j < n; j++)
                    nal += layer->pNalLengthInByte[j];
                /* The SPS, for avcC's bytes, after its 4-byte start code. */
                if ((nal[4] & 0x1f) == 7 && !s->sps_size) {
                    s->sps_size = (size_t)layer->pNalLengthInByte[n] - 4;
                    assert_true(s->sps_size <= sizeof s->sps);
                    memcpy(s->sps, nal + 4, s->sps_size);
                }
                memcpy(s->au[i] + s->size[i], nal, (size_t)layer->pNalLengthInByte[n]);
                s->size[i] += (size_t)layer->pNalLengthInByte[n];
            }
        }
        s->key[i] = info.eFrameType == videoFrameTypeIDR;
        assert_int_equal(s->key[i], i == 0 || i == SECOND_KEY);
    }
    (*e)->Uninitialize(e);
    WelsDestroySVCEncoder(e);
}
#endif

/* The animation, encoded once for every case that needs it. */
static stream *encoded(void)
{
#if TEST_MP4_OPENH264
    static stream s;
    if (!s.source) {
        s.source = malloc((size_t)FRAMES * PICTURE);
        assert_non_null(s.source);
        encode(&s);
    }
    return &s;
#else
    skip_because("built without OpenH264 (Debian's libopenh264-dev) to make H.264");
    return NULL;
#endif
}

/* The stream muxed into a new temporary file, with pts[i] (NULL: i). */
static FILE *mux(const stream *s, uint32_t timescale, const int64_t *pts, int64_t end_pts)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, W, H, timescale, "rec"));
    for (int i = 0; i < FRAMES; i++)
        assert_ok(cugl__mp4_add(m, s->au[i], s->size[i], pts ? pts[i] : i, s->key[i]));
    assert_ok(cugl__mp4_finish(m, end_pts));
    assert_int_equal(fflush(f), 0);
    return f;
}

/* "/dev/fd/N" of a temporary file, for the tools: they read it from the
 * start through their own descriptor. */
static const char *path_of(FILE *f)
{
    static char path[32];
    snprintf(path, sizeof path, "/dev/fd/%d", fileno(f));
    return path;
}

/* Each value of `key` in ffprobe's "key=value" lines, in order. */
static int values(const char *text, const char *key, long long *out, int max)
{
    int n = 0;
    size_t k = strlen(key);
    for (const char *line = text; *line;) {
        if (strncmp(line, key, k) == 0 && line[k] == '=') {
            assert_true(n < max);
            out[n++] = strtoll(line + k + 1, NULL, 10);
        }
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : line + strlen(line);
    }
    return n;
}

static void has_line(const char *text, const char *line)
{
    char want[128];
    snprintf(want, sizeof want, "\n%s\n", line);
    char *all = malloc(strlen(text) + 2);
    assert_non_null(all);
    snprintf(all, strlen(text) + 2, "\n%s", text);
    if (!strstr(all, want))
        fail_msg("ffprobe's output has no line \"%s\":\n%s", line, text);
    free(all);
}

/* The reader: codec, size, 64 frames, the keys where they were, each
 * frame at i/60 s, 64/60 s in all. ffprobe, where it is: the same, its
 * words for the stream, and the key frames it decodes. */
static void reads_back(void **state)
{
    (void)state;
    stream *s = encoded();
    FILE *f = mux(s, FPS, NULL, FRAMES);
    reader_video v;
    readback_read(&v, path_of(f), false);
    assert_string_equal(v.codec, "h264");
    assert_int_equal(v.width, W);
    assert_int_equal(v.height, H);
    assert_int_equal(v.frames, FRAMES);
    for (int i = 0; i < FRAMES; i++) {
        if (fabs(v.pts[i] - (double)i / FPS) > 1e-9)
            fail_msg("frame %d at %.9f s, not %d/60", i, v.pts[i], i);
        assert_int_equal(v.key[i], i == 0 || i == SECOND_KEY);
    }
    assert_true(fabs(v.duration - (double)FRAMES / FPS) < 1e-9);
    if (!readback_tools()) {
        reader_free(&v);
        fclose(f);
        return;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -count_frames -select_streams v:0 -show_entries "
             "stream=codec_name,profile,width,height,r_frame_rate,time_base,duration_ts,"
             "nb_read_frames -of default=nw=1 %s",
             tool("FFPROBE"), path_of(f));
    char *text = readback_output(cmd);
    for (const char *line = text; *line;) {
        int n = (int)strcspn(line, "\n");
        printf("# %.*s\n", n, line);
        line += n + (line[n] != '\0');
    }
    static const char *const lines[] = {"codec_name=h264", "profile=Constrained Baseline",
                                        "width=320", "height=240", "r_frame_rate=60/1",
                                        "time_base=1/60", "duration_ts=64",
                                        "nb_read_frames=64"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        has_line(text, lines[i]);
    free(text);
    snprintf(cmd, sizeof cmd,
             "'%s' -v error -select_streams v:0 -show_entries frame=key_frame,pts "
             "-of default=nw=1 %s",
             tool("FFPROBE"), path_of(f));
    text = readback_output(cmd);
    long long pts[FRAMES + 1], key[FRAMES + 1];
    assert_int_equal(values(text, "pts", pts, FRAMES + 1), FRAMES);
    assert_int_equal(values(text, "key_frame", key, FRAMES + 1), FRAMES);
    for (int i = 0; i < FRAMES; i++) {
        assert_int_equal(pts[i], i); /* in 1/60 s */
        assert_int_equal(key[i], i == 0 || i == SECOND_KEY);
    }
    free(text);
    reader_video p;
    readback_probe(&p, path_of(f), false);
    readback_agree(&v, &p);
    reader_free(&p);
    reader_free(&v);
    fclose(f);
}

/* Timestamps that are not a fixed rate, in milliseconds from 1000: each
 * sample where it was given, less the first's, and as long as given. */
static void timestamps_pass_through(void **state)
{
    (void)state;
    stream *s = encoded();
    int64_t pts[FRAMES];
    for (int i = 0; i < FRAMES; i++)
        pts[i] = 1000 + i * 50 / 3 + (i % 5 == 0 ? 2 : 0);
    const int64_t end = pts[FRAMES - 1] + 20;
    FILE *f = mux(s, 1000, pts, end);
    reader_video v;
    readback_read(&v, path_of(f), false);
    assert_int_equal(v.frames, FRAMES);
    for (int i = 0; i < FRAMES; i++)
        if (fabs(v.pts[i] - (double)(pts[i] - pts[0]) / 1000) > 1e-9)
            fail_msg("frame %d at %.9f s, not %.3f", i, v.pts[i], (double)(pts[i] - pts[0]) / 1000);
    assert_true(fabs(v.duration - (double)(end - pts[0]) / 1000) < 1e-9);
    if (readback_tools()) {
        char cmd[512];
        snprintf(cmd, sizeof cmd,
                 "'%s' -v error -select_streams v:0 -show_entries packet=pts,duration "
                 "-of default=nw=1 %s",
                 tool("FFPROBE"), path_of(f));
        char *text = readback_output(cmd);
        long long got[FRAMES + 1], duration[FRAMES + 1];
        assert_int_equal(values(text, "pts", got, FRAMES + 1), FRAMES);
        assert_int_equal(values(text, "duration", duration, FRAMES + 1), FRAMES);
        for (int i = 0; i < FRAMES; i++) {
            assert_int_equal(got[i], pts[i] - pts[0]);
            assert_int_equal(duration[i], (i + 1 < FRAMES ? pts[i + 1] : end) - pts[i]);
        }
        free(text);
        reader_video p;
        readback_probe(&p, path_of(f), false);
        readback_agree(&v, &p);
        reader_free(&p);
    }
    reader_free(&v);
    fclose(f);
}

/* Each of `v`'s pictures within 30 dB of its source (Y, U and V
 * together), in order: the worst. */
static double worst_of(const reader_video *v, const stream *s, const char *who)
{
    assert_int_equal(v->frames, FRAMES);
    assert_int_equal(v->picture_size, PICTURE);
    double worst = 99;
    for (int i = 0; i < FRAMES; i++) {
        double db = readback_psnr(v->pictures + (size_t)i * PICTURE,
                                  s->source + (size_t)i * PICTURE, PICTURE);
        if (db < 30)
            fail_msg("frame %d decodes by %s at %.2f dB of its source (30 wanted)", i, who, db);
        worst = db < worst ? db : worst;
    }
    return worst;
}

/* Every frame decoded, by the reader (OpenH264) and by ffmpeg where it is. */
static void decodes_every_frame(void **state)
{
    (void)state;
    stream *s = encoded();
    FILE *f = mux(s, FPS, NULL, FRAMES);
    reader_video v;
    readback_read(&v, path_of(f), true);
    printf("# %d frames decoded by the reader, the worst at %.2f dB\n", v.frames,
           worst_of(&v, s, "the reader"));
    if (readback_tools()) {
        reader_video p;
        readback_probe(&p, path_of(f), true);
        readback_agree(&v, &p);
        printf("# %d frames decoded by ffmpeg, the worst at %.2f dB\n", p.frames,
               worst_of(&p, s, "ffmpeg"));
        reader_free(&p);
    }
    reader_free(&v);
    fclose(f);
}

/* --- the reader holds the index to its rules ------------------------------ */

/* A 32-bit field of a box changed as a muxer's mistake would: `add` to
 * the one at `at` in the body of the box at `path`, or set to `set`. */
typedef struct broken {
    const char *path;
    ptrdiff_t at; /* from the body's start: -8, the box's size */
    uint32_t add, set;
    const char *why; /* the reader's reason, or the start of it */
} broken;

static const broken broken_indexes[] = {
    {STBL "stss", 12, 1, 0, "frame 32 holds an IDR slice but is not a sync sample"},
    {STBL "stsd", 8 + 8 + 24, 16u << 16, 0,
     "moov/trak/mdia/minf/stbl/stsd/avc1 says 336 x 240, its SPS 320 x 240"},
    {STBL "stsd", 8 + 8 + 78 + 8 + 4, (uint32_t)-(1u << 24), 0,
     "moov/trak/mdia/minf/stbl/stsd/avc1/avcC says NAL units' lengths take 3 bytes: 1, 2 or 4"},
    {STBL "stsd", 8 + 8 + 78 + 8, 1u << 16, 0,
     "moov/trak/mdia/minf/stbl/stsd/avc1/avcC's profile, constraints and level (67, "},
    {STBL "stsz", 8, 1, 0, "moov/trak/mdia/minf/stbl/stsz says 65 entries of 4 bytes: its 256 "
                           "bytes hold 64"},
    {STBL "stts", 8, (uint32_t)-1, 0,
     "moov/trak/mdia/minf/stbl/stts gives times to 63 samples, stsz has 64"},
    {STBL "stco", 8 + 4 * 63, 1u << 20, 0, "frame 63's sample runs past the end of the file"},
    {STBL "stco", 8 + 4 * 5, 1, 0, "frame 5's sample"},
    {STBL "stsc", 8 + 4, 1, 0, "chunk 33 holds 2 samples: only 0 of stsz's 64 are left"},
    {"moov/trak/mdia/mdhd", 12, 0, 1, NULL}, /* a timescale of 1: times in whole seconds */
    {"moov/trak/mdia/mdhd", 12, 0, 0, "moov/trak/mdia/mdhd's timescale is 0 ticks a second"},
    {"moov/trak/mdia/hdlr", 8, 0, 0x736f756e /* soun */,
     "no video track: no moov/trak has an hdlr of 'vide'"},
    {"moov", -8, 1, 0, "the file: box 'moov' at byte "},
};

static void the_reader_refuses_a_broken_index(void **state)
{
    (void)state;
    stream *s = encoded();
    FILE *f = mux(s, FPS, NULL, FRAMES);
    size_t size;
    uint8_t *file = slurp(f, &size);
    fclose(f);
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    for (size_t k = 0; k < sizeof broken_indexes / sizeof broken_indexes[0]; k++) {
        const broken *b = &broken_indexes[k];
        memcpy(copy, file, size);
        size_t n;
        uint8_t *field = (uint8_t *)box_at(copy, size, b->path, &n) + b->at;
        uint32_t v = b->add ? rd32(field) + b->add : b->set;
        for (int i = 0; i < 4; i++)
            field[i] = (uint8_t)(v >> (24 - 8 * i));
        reader_video r;
        char why[512];
        int rc = reader_parse(&r, copy, size, false, why, sizeof why);
        if (!b->why) { /* still a file: each frame a second long */
            if (rc != 0)
                fail_msg("%s at %td set to %u: refused: %s", b->path, b->at, v, why);
            assert_true(r.pts[FRAMES - 1] == FRAMES - 1);
            reader_free(&r);
            continue;
        }
        if (rc == 0)
            fail_msg("%s at %td changed to %u: read, not refused", b->path, b->at, v);
        if (strncmp(why, b->why, strlen(b->why)) != 0)
            fail_msg("%s at %td changed to %u: \"%s\", expected \"%s\"", b->path, b->at, v, why,
                     b->why);
        printf("# %s\n", why);
    }
    free(copy);
    free(file);
}

/* Eight frames muxed, cut short at every byte of its ends and changed at
 * random (seeded, so a failure repeats): refused with a reason or read
 * sanely, never a read past the bytes given (the sanitizers' build). */
static void damaged_copies_are_refused_or_read_sanely(void **state)
{
    (void)state;
    stream *s = encoded();
    FILE *f = tmpfile();
    assert_non_null(f);
    cugl__mp4 *m = NULL;
    assert_ok(cugl__mp4_open(&m, f, W, H, FPS, "rec"));
    for (int i = 0; i < 8; i++)
        assert_ok(cugl__mp4_add(m, s->au[i], s->size[i], i, s->key[i]));
    assert_ok(cugl__mp4_finish(m, 8));
    size_t size;
    uint8_t *file = slurp(f, &size);
    fclose(f);
    readback_damage("an MP4 of 8 frames", file, size, 20240601);
    free(file);
}

/* The same samples make the same bytes; avcC carries the encoder's SPS and
 * its profile, compatibility and level; stss the two key frames. */
static void the_same_input_makes_the_same_file(void **state)
{
    (void)state;
    stream *s = encoded();
    FILE *a = mux(s, FPS, NULL, FRAMES), *b = mux(s, FPS, NULL, FRAMES);
    size_t na, nb;
    uint8_t *fa = slurp(a, &na), *fb = slurp(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(fa, fb, na);
    size_t n;
    const uint8_t *stsd = box_at(fa, na, STBL "stsd", &n);
    const uint8_t *avcc = stsd + 8 + 8 + 78 + 8;
    assert_int_equal(avcc[0], 1);
    assert_memory_equal(avcc + 1, s->sps + 1, 3);
    assert_int_equal(avcc[1], 66); /* Baseline */
    assert_int_equal(avcc[6] << 8 | avcc[7], s->sps_size);
    assert_memory_equal(avcc + 8, s->sps, s->sps_size);
    const uint8_t *stss = box_at(fa, na, STBL "stss", &n);
    assert_int_equal(rd32(stss + 4), 2);
    assert_int_equal(rd32(stss + 8), 1);
    assert_int_equal(rd32(stss + 12), SECOND_KEY + 1);
    printf("# %zu bytes, twice the same\n", na);
    free(fa);
    free(fb);
    fclose(a);
    fclose(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(samples_and_boxes_hold_what_was_given),
        cmocka_unit_test(unseekable_and_used_files_are_refused),
        cmocka_unit_test(a_full_disk_fails_with_its_reason),
        cmocka_unit_test(past_4_gib_offsets_go_to_co64),
        cmocka_unit_test(reads_back),
        cmocka_unit_test(timestamps_pass_through),
        cmocka_unit_test(decodes_every_frame),
        cmocka_unit_test(the_reader_refuses_a_broken_index),
        cmocka_unit_test(damaged_copies_are_refused_or_read_sanely),
        cmocka_unit_test(the_same_input_makes_the_same_file),
    };
    return cugl_test_run(tests);
}
