/*
 * jpeg_gl.c - baseline JPEG by GL compute shaders, 4:2:0, for the frame
 * server (jpeg_gl.h). The picture never leaves the GPU and nothing runs
 * outside GL's context: on one GPU, CUDA's work (nvJPEG's) waits for GL's
 * turn and makes GL wait for its own, where these shaders are GL's work
 * like the program's.
 *
 *   jpeg_dct.comp      an MCU a work group: colour, DCT, quantization
 *   jpeg_huffman.comp  a restart interval (INTERVAL MCUs) a work group, a
 *                      block's 64 coefficients at once, into a slot of
 *                      SLOT_BYTES of its own
 *   jpeg_scan.comp     each interval's place: a scan of the lengths; where
 *                      one overflowed its slot, jpeg_huffman.comp again
 *                      (an indirect dispatch), writing each in place
 *   jpeg_copy.comp     the bytes into the job's buffer in host memory
 *
 * The quantization and Huffman tables are libjpeg-turbo's: a 16 x 16
 * picture encoded by it at the quality asked for, its markers read, so the
 * header and tables are those of any JPEG of libjpeg-turbo (the ITU T.81
 * Annex K tables, scaled as libjpeg scales them). Its markers are the
 * header of ours, with the size and a restart interval (DRI) put in.
 */
#include "jpeg_gl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "cugl/app_gl.h"
#include "cugl/error.h"

extern const unsigned char cugl_shader_jpeg_dct_comp[];
extern const unsigned char cugl_shader_jpeg_huffman_comp[];
extern const unsigned char cugl_shader_jpeg_scan_comp[];
extern const unsigned char cugl_shader_jpeg_copy_comp[];

enum {
    INTERVAL = 4,      /* MCUs a restart interval: 8,100 intervals at 3840x2160,
                        * each a few bytes of markers and padding (at most
                        * jpeg_huffman.comp's INTERVAL: its shared memory) */
    CODES = 2 * 272,   /* jpeg_huffman.comp's table: DC at 0, AC at 16, chroma at 272 */
    HEADER_WORDS = 16, /* jpeg_copy.comp's header before the data */
    QUALITIES = 8,     /* tables kept for this many qualities */
    SLOT_BYTES = 1024, /* an interval's slot (jpeg_huffman.comp's SLOT_WORDS * 4):
                        * 14 times the mean at 3840x2160, quality 85 */
    BINDINGS = 8,      /* storage buffer bindings the shaders use: 0-7 */
};

/* What libjpeg-turbo's JPEG at one quality gives: its markers before the
 * scan (SOF0 among them), the scan's header, and the quantizers. */
typedef struct tables {
    int quality; /* 0: none yet */
    unsigned char head[768];
    size_t head_size, sof_at;
    unsigned char sos[32];
    size_t sos_size;
    float quantizer[128]; /* natural order, luma's then chroma's */
} tables;

struct cugl__jpeg_gl {
    GLuint dct, huffman, scan, copy; /* programs */
    GLuint codes;                    /* Huffman codes, `CODES` words */
    /* the passes' memory, grown as needed */
    GLuint coef, masks, lengths, places, slots, dispatch, bytes;
    size_t coef_size, masks_size, lengths_size, places_size, slots_size, dispatch_size, bytes_size;
    int zigzag[64]; /* natural index -> zig-zag index */
    tables q[QUALITIES];
    int next; /* the entry `q` replaces next */
    int dct_quality; /* whose quantizers the DCT program has; 0: none */
};

static void set_why(char *why, size_t n, const char *fmt, const char *detail)
{
    snprintf(why, n, fmt, detail);
}

/* Natural order (row-major, row = vertical frequency) to zig-zag order:
 * the anti-diagonals, odd ones walked down, even ones up. */
static void make_zigzag(int zigzag[64])
{
    int k = 0;
    for (int s = 0; s < 15; s++) {
        int lo = s < 8 ? 0 : s - 7, hi = s < 8 ? s : 7;
        for (int i = 0; i <= hi - lo; i++) {
            int row = s % 2 ? lo + i : hi - i;
            zigzag[row * 8 + (s - row)] = k++;
        }
    }
}

/* Huffman codes from a DHT's counts and symbols (T.81 Annex C): code and
 * length of each symbol, code | length << 16. */
static bool make_codes(uint32_t *codes, const unsigned char *counts, const unsigned char *symbols,
                       int n, int symbol_limit)
{
    unsigned code = 0;
    int k = 0;
    for (int length = 1; length <= 16; length++) {
        for (int i = 0; i < counts[length - 1]; i++, k++) {
            if (k >= n || symbols[k] >= symbol_limit || code >= 1u << length)
                return false;
            codes[symbols[k]] = code++ | (uint32_t)length << 16;
        }
        code <<= 1;
    }
    return k == n;
}

static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

/* libjpeg-turbo's JPEG of a 16 x 16 picture at `quality`, its markers read
 * into `t` and, where `codes`, its Huffman tables into them. */
static bool read_tables(tables *t, uint32_t *codes, const int zigzag[64], int quality, char *why,
                        size_t why_size)
{
    unsigned char rgb[16 * 16 * 3];
    for (int i = 0; i < (int)sizeof rgb; i++)
        rgb[i] = (unsigned char)(i * 37 % 251);
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    if (!tj || tjCompress2(tj, rgb, 16, 48, 16, TJPF_RGB, &jpeg, &size, TJSAMP_420, quality, 0)) {
        set_why(why, why_size, "libjpeg-turbo cannot make a JPEG to read tables from: %s",
                tj ? tjGetErrorStr2(tj) : "no compressor");
        if (tj)
            tjDestroy(tj);
        return false;
    }
    bool ok = false, quantizers[2] = {false, false};
    int huffman = 0;
    size_t at = 2, sos = 0;
    while (at + 4 <= size && jpeg[at] == 0xff) {
        unsigned marker = jpeg[at + 1], length = be16(jpeg + at + 2);
        const unsigned char *p = jpeg + at + 4, *end = jpeg + at + 2 + length;
        if (at + 2 + length > size || length < 2)
            break;
        if (marker == 0xda) {
            sos = at;
            break;
        }
        if (marker == 0xc0)
            t->sof_at = at;
        if (marker == 0xdb) { /* DQT: 8-bit tables, zig-zag order */
            while (p + 65 <= end && (p[0] >> 4) == 0 && (p[0] & 15) < 2) {
                int id = p[0] & 15;
                for (int n = 0; n < 64; n++)
                    t->quantizer[id * 64 + n] = p[1 + zigzag[n]];
                quantizers[id] = true;
                p += 65;
            }
        }
        if (marker == 0xc4) { /* DHT: class (0 DC, 1 AC) and id (0 luma, 1 chroma) */
            while (p + 17 <= end) {
                int cls = p[0] >> 4, id = p[0] & 15, n = 0;
                for (int i = 1; i <= 16; i++)
                    n += p[i];
                if (cls > 1 || id > 1 || p + 17 + n > end)
                    break;
                if (codes &&
                    !make_codes(codes + id * 272 + cls * 16, p + 1, p + 17, n, cls ? 256 : 12))
                    break;
                huffman |= 1 << (cls * 2 + id);
                p += 17 + n;
            }
        }
        at += 2 + length;
    }
    if (sos && t->sof_at && quantizers[0] && quantizers[1] && huffman == 15 &&
        sos <= sizeof t->head && 2 + be16(jpeg + sos + 2) <= sizeof t->sos &&
        jpeg[t->sof_at + 9] == 3 && jpeg[t->sof_at + 11] == 0x22) {
        memcpy(t->head, jpeg, sos);
        t->head_size = sos;
        t->sos_size = 2 + be16(jpeg + sos + 2);
        memcpy(t->sos, jpeg + sos, t->sos_size);
        t->quality = quality;
        ok = true;
    } else {
        set_why(why, why_size, "%s",
                "libjpeg-turbo's JPEG has not the markers expected (SOF0 of 3 components, "
                "4:2:0; 2 quantization tables; 4 Huffman tables)");
    }
    tjFree(jpeg);
    tjDestroy(tj);
    return ok;
}

/* The tables of `quality`, read once. */
static const tables *tables_of(cugl__jpeg_gl *e, int quality, char *why, size_t why_size)
{
    for (int i = 0; i < QUALITIES; i++)
        if (e->q[i].quality == quality)
            return &e->q[i];
    tables *t = &e->q[e->next];
    *t = (tables){0};
    if (!read_tables(t, NULL, e->zigzag, quality, why, why_size))
        return NULL;
    e->next = (e->next + 1) % QUALITIES;
    return t;
}

static bool program(GLuint *out, const char *name, const unsigned char *source, char *why,
                    size_t why_size)
{
    if (cugl_app_compute_program(out, name, (const char *)source) == CUGL_OK)
        return true;
    set_why(why, why_size, "%s", cugl_last_error());
    cugl_clear_error();
    return false;
}

void cugl__jpeg_gl_close(cugl__jpeg_gl *e)
{
    if (!e)
        return;
    GLuint programs[] = {e->dct, e->huffman, e->scan, e->copy};
    for (int i = 0; i < 4; i++)
        if (programs[i])
            glDeleteProgram(programs[i]);
    GLuint buffers[] = {e->codes,  e->coef,     e->masks, e->lengths,
                        e->places, e->slots, e->dispatch, e->bytes};
    glDeleteBuffers(8, buffers); /* 0s are ignored */
    free(e);
}

cugl__jpeg_gl *cugl__jpeg_gl_open(char *why, size_t why_size)
{
    cugl__jpeg_gl *e = calloc(1, sizeof *e);
    if (!e) {
        set_why(why, why_size, "%s", "no memory");
        return NULL;
    }
    make_zigzag(e->zigzag);
    uint32_t codes[CODES] = {0};
    if (!read_tables(&e->q[0], codes, e->zigzag, 75, why, why_size))
        goto fail;
    e->next = 1;
    if (!program(&e->dct, "jpeg_dct", cugl_shader_jpeg_dct_comp, why, why_size) ||
        !program(&e->huffman, "jpeg_huffman", cugl_shader_jpeg_huffman_comp, why, why_size) ||
        !program(&e->scan, "jpeg_scan", cugl_shader_jpeg_scan_comp, why, why_size) ||
        !program(&e->copy, "jpeg_copy", cugl_shader_jpeg_copy_comp, why, why_size))
        goto fail;
    glProgramUniform1iv(e->dct, 130, 64, e->zigzag);
    glCreateBuffers(1, &e->codes);
    glNamedBufferStorage(e->codes, sizeof codes, codes, 0);
    if (glGetError() != GL_NO_ERROR) {
        set_why(why, why_size, "%s", "GL cannot make the Huffman codes' buffer");
        goto fail;
    }
    return e;
fail:
    cugl__jpeg_gl_close(e);
    return NULL;
}

/* Buffer `*name` of at least `size` bytes (GPU memory), made anew to grow:
 * GL deletes the old one once the work queued on it is done. */
static void grow(GLuint *name, size_t *have, size_t size)
{
    if (*name && *have >= size)
        return;
    if (*name)
        glDeleteBuffers(1, name);
    glCreateBuffers(1, name);
    glNamedBufferStorage(*name, (GLsizeiptr)size, NULL, 0);
    *have = size;
}

void cugl__jpeg_gl_out_free(cugl__jpeg_gl_out *out)
{
    if (out->buffer)
        glDeleteBuffers(1, &out->buffer); /* unmapped with it */
    if (out->queries[0])
        glDeleteQueries(JPEG_GL_PASSES + 1, out->queries);
    *out = (cugl__jpeg_gl_out){0};
}

/* `out`'s buffer in host memory, mapped, for `capacity` bytes of data. */
static bool out_room(cugl__jpeg_gl_out *out, size_t capacity)
{
    if (out->buffer && out->capacity >= capacity)
        return true;
    if (out->buffer)
        glDeleteBuffers(1, &out->buffer);
    out->buffer = 0;
    out->mapped = NULL;
    out->capacity = 0;
    GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    size_t size = HEADER_WORDS * 4 + capacity;
    glCreateBuffers(1, &out->buffer);
    glNamedBufferStorage(out->buffer, (GLsizeiptr)size, NULL, flags | GL_CLIENT_STORAGE_BIT);
    out->mapped = glMapNamedBufferRange(out->buffer, 0, (GLsizeiptr)size, flags);
    if (!out->mapped)
        return false;
    out->capacity = capacity;
    return true;
}

/* The JPEG's markers for a width x height picture: libjpeg-turbo's with
 * the size put into SOF0, and DRI before the scan. */
static void make_header(cugl__jpeg_gl_out *out, const tables *t, int width, int height)
{
    unsigned char *h = out->header;
    memcpy(h, t->head, t->head_size);
    h[t->sof_at + 5] = (unsigned char)(height >> 8);
    h[t->sof_at + 6] = (unsigned char)height;
    h[t->sof_at + 7] = (unsigned char)(width >> 8);
    h[t->sof_at + 8] = (unsigned char)width;
    size_t n = t->head_size;
    const unsigned char dri[6] = {0xff, 0xdd, 0, 4, 0, INTERVAL};
    memcpy(h + n, dri, sizeof dri);
    n += sizeof dri;
    memcpy(h + n, t->sos, t->sos_size);
    out->header_size = n + t->sos_size;
}

/* The bindings encode() uses, to put back. */
typedef struct bindings {
    GLint program, texture, active, indirect, query;
    GLint storage[BINDINGS];
} bindings;

static void save(bindings *b)
{
    glGetIntegerv(GL_CURRENT_PROGRAM, &b->program);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &b->active);
    glActiveTexture(GL_TEXTURE0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &b->texture);
    glActiveTexture((GLenum)b->active);
    glGetIntegerv(GL_DISPATCH_INDIRECT_BUFFER_BINDING, &b->indirect);
    glGetIntegerv(GL_QUERY_BUFFER_BINDING, &b->query);
    for (GLuint i = 0; i < BINDINGS; i++)
        glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, i, &b->storage[i]);
}

static void restore(const bindings *b)
{
    glUseProgram((GLuint)b->program);
    glBindTextureUnit(0, (GLuint)b->texture);
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, (GLuint)b->indirect);
    glBindBuffer(GL_QUERY_BUFFER, (GLuint)b->query);
    for (GLuint i = 0; i < BINDINGS; i++)
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, (GLuint)b->storage[i]);
}

/* `out` with room for the JPEG of a width x height picture (or twice what
 * overflowed last time) and its header, and the encoder's buffers for its
 * MCUs and restart intervals. */
static bool make_room(cugl__jpeg_gl *e, cugl__jpeg_gl_out *out, const tables *t, int width,
                      int height, int mcus, int intervals, char *why, size_t why_size)
{
    /* 4 bits a pixel (64 KB at least), or twice what overflowed: a
     * JPEG at quality 85 takes 0.6 bits a pixel of a detailed 4K picture,
     * where 12 bits a pixel pinned 12 MB of host memory a job. */
    size_t capacity = (size_t)width * (size_t)height / 2 + (size_t)intervals * 8;
    if (capacity < 65536)
        capacity = 65536;
    if (out->overflowed)
        capacity = out->capacity * 2;
    capacity = (capacity + 4095) & ~(size_t)4095;
    while (glGetError() != GL_NO_ERROR) {
    }
    if (!out_room(out, capacity)) {
        snprintf(why, why_size, "GL cannot map a buffer of %zu bytes for the JPEG", capacity);
        return false;
    }
    out->overflowed = false;
    if (!out->queries[0])
        glCreateQueries(GL_TIMESTAMP, JPEG_GL_PASSES + 1, out->queries);
    grow(&e->coef, &e->coef_size, (size_t)mcus * 192 * 4);
    grow(&e->masks, &e->masks_size, (size_t)mcus * 12 * 4);
    grow(&e->lengths, &e->lengths_size, (size_t)intervals * 4);
    grow(&e->places, &e->places_size, (size_t)(4 + intervals) * 4);
    grow(&e->slots, &e->slots_size, (size_t)intervals * SLOT_BYTES);
    grow(&e->dispatch, &e->dispatch_size, 3 * 4);
    grow(&e->bytes, &e->bytes_size, out->capacity);
    make_header(out, t, width, height);
    out->width = width;
    out->height = height;
    return true;
}

/* The passes, queued: coefficients, each interval's codes into its slot,
 * their places, those that did not fit again in place, all into `out`'s
 * host memory; a timestamp after each, and the first and last into the
 * header (words 4-7) once the GPU has them, for collect() on any thread. */
static void queue_passes(cugl__jpeg_gl *e, cugl__jpeg_gl_out *out, const tables *t,
                         GLuint texture, int width, int height, bool bottom_up, int quality)
{
    int mcus_x = (width + 15) / 16, mcus_y = (height + 15) / 16, mcus = mcus_x * mcus_y;
    int intervals = (mcus + INTERVAL - 1) / INTERVAL;
    glQueryCounter(out->queries[0], GL_TIMESTAMP);
    /* Coefficients. */
    glUseProgram(e->dct);
    glProgramUniform2i(e->dct, 0, width, height);
    glProgramUniform1i(e->dct, 1, mcus_x);
    glProgramUniform1i(e->dct, 194, bottom_up);
    if (e->dct_quality != quality) { /* a program's uniforms are ordered with its dispatches */
        glProgramUniform1fv(e->dct, 2, 128, t->quantizer);
        e->dct_quality = quality;
    }
    glBindTextureUnit(0, texture);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, e->coef);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 6, e->masks);
    glDispatchCompute((GLuint)mcus_x, (GLuint)mcus_y, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    glQueryCounter(out->queries[1], GL_TIMESTAMP);
    /* Each interval into its slot, a work group each. */
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, e->codes);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, e->lengths);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, e->places);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, e->slots);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, e->dispatch);
    glProgramUniform1i(e->huffman, 0, mcus);
    glProgramUniform1i(e->huffman, 1, INTERVAL);
    glProgramUniform1i(e->huffman, 2, intervals);
    glProgramUniform1i(e->huffman, 3, 0);
    glUseProgram(e->huffman);
    glDispatchCompute((GLuint)intervals, 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    glQueryCounter(out->queries[2], GL_TIMESTAMP);
    /* Their places, and whether they all fit their slots. */
    glUseProgram(e->scan);
    glProgramUniform1i(e->scan, 2, intervals);
    glProgramUniform1ui(e->scan, 4, (GLuint)out->capacity);
    glProgramUniform1ui(e->scan, 5, SLOT_BYTES);
    glDispatchCompute(1, 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_COMMAND_BARRIER_BIT);
    glQueryCounter(out->queries[3], GL_TIMESTAMP);
    /* Where one did not: all again, in place (no work groups otherwise). */
    glUseProgram(e->huffman);
    glProgramUniform1i(e->huffman, 3, 1);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, e->bytes);
    glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, e->dispatch);
    glDispatchComputeIndirect(0);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    glQueryCounter(out->queries[4], GL_TIMESTAMP);
    /* Into host memory. */
    glUseProgram(e->copy);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, e->slots);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 5, out->buffer);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 6, e->bytes);
    glDispatchCompute((GLuint)intervals, 1, 1);
    glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
    glQueryCounter(out->queries[5], GL_TIMESTAMP);
    /* The start and end times into the header (words 4-7), written by the
     * GPU once it has them: collect() reads them on any thread. */
    glBindBuffer(GL_QUERY_BUFFER, out->buffer);
    glGetQueryObjectui64v(out->queries[0], GL_QUERY_RESULT, (GLuint64 *)(uintptr_t)16);
    glGetQueryObjectui64v(out->queries[JPEG_GL_PASSES], GL_QUERY_RESULT,
                          (GLuint64 *)(uintptr_t)24);
}

bool cugl__jpeg_gl_encode(cugl__jpeg_gl *e, cugl__jpeg_gl_out *out, GLuint texture, int width,
                          int height, bool bottom_up, int quality, char *why, size_t why_size)
{
    if (width < 1 || height < 1 || width > 65535 || height > 65535 || quality < 1 ||
        quality > 100) {
        snprintf(why, why_size, "a JPEG of %d x %d at quality %d: out of range", width, height,
                 quality);
        return false;
    }
    const tables *t = tables_of(e, quality, why, why_size);
    if (!t)
        return false;
    int mcus_x = (width + 15) / 16, mcus_y = (height + 15) / 16, mcus = mcus_x * mcus_y;
    int intervals = (mcus + INTERVAL - 1) / INTERVAL;
    if (intervals > 65535) { /* a dispatch's work groups, at least as GL has them */
        snprintf(why, why_size, "a JPEG of %d x %d: over 65,535 restart intervals of %d MCUs",
                 width, height, INTERVAL);
        return false;
    }
    if (!make_room(e, out, t, width, height, mcus, intervals, why, why_size))
        return false;
    bindings saved;
    save(&saved);
    queue_passes(e, out, t, texture, width, height, bottom_up, quality);
    restore(&saved);
    GLenum error = glGetError();
    if (error != GL_NO_ERROR) {
        snprintf(why, why_size, "GL error 0x%04x queueing the JPEG encode of %d x %d", error,
                 width, height);
        return false;
    }
    return true;
}

double cugl__jpeg_gl_gpu_ms(const cugl__jpeg_gl_out *out, double pass_ms[JPEG_GL_PASSES])
{
    GLuint64 t[JPEG_GL_PASSES + 1] = {0};
    GLint bound = 0; /* a bound query buffer takes the results, at offsets */
    glGetIntegerv(GL_QUERY_BUFFER_BINDING, &bound);
    glBindBuffer(GL_QUERY_BUFFER, 0);
    for (int i = 0; i <= JPEG_GL_PASSES; i++)
        glGetQueryObjectui64v(out->queries[i], GL_QUERY_RESULT, &t[i]);
    glBindBuffer(GL_QUERY_BUFFER, (GLuint)bound);
    for (int i = 0; pass_ms && i < JPEG_GL_PASSES; i++)
        pass_ms[i] = t[i + 1] > t[i] ? (double)(t[i + 1] - t[i]) / 1e6 : 0;
    return t[JPEG_GL_PASSES] > t[0] ? (double)(t[JPEG_GL_PASSES] - t[0]) / 1e6 : 0;
}

unsigned char *cugl__jpeg_gl_collect(cugl__jpeg_gl_out *out, size_t *size, double *gpu_ms,
                                     bool *overflowed)
{
    const uint32_t *m = out->mapped;
    uint64_t start, end;
    memcpy(&start, m + 4, 8);
    memcpy(&end, m + 6, 8);
    *gpu_ms = end > start ? (double)(end - start) / 1e6 : 0;
    *size = 0;
    *overflowed = false;
    size_t total = m[0];
    if (!m[1] || total > out->capacity) {
        *overflowed = out->overflowed = true;
        return NULL;
    }
    unsigned char *jpeg = malloc(out->header_size + total);
    if (!jpeg)
        return NULL;
    memcpy(jpeg, out->header, out->header_size);
    memcpy(jpeg + out->header_size, m + HEADER_WORDS, total);
    *size = out->header_size + total;
    return jpeg;
}
