/*
 * reader_decode.c - every sample decoded, each picture copied as packed
 * I420 into its frame's place in presentation order.
 *
 * H.264 goes to OpenH264 as Annex B: each NAL unit after a 4-byte start
 * code instead of its length, avcC's SPS and PPS before every key frame
 * (as ffmpeg's h264_mp4toannexb does), one access unit a call; each
 * picture comes back with the number of the sample it was given with, so
 * a decoder that reorders puts each where it belongs. VP8 and VP9 go to
 * libvpx, one frame a call, one picture out of each. Error concealment is
 * off: a frame the decoder cannot decode fails the file.
 *
 * Where this build has no decoder for the codec (READER_OPENH264 and
 * READER_VPX, set where the packages are found), decoding fails and names
 * the package.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

#if READER_OPENH264
#include <wels/codec_api.h>
#endif
#if READER_VPX
#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>
#endif

/* Where the pictures go, and which frames have theirs. */
typedef struct sink {
    reader__in *in;
    const reader__track *t;
    const int *slot;
    uint8_t *pictures;
    bool *done;
    const char *decoder;
} sink;

#if READER_OPENH264 || READER_VPX
/* Sample i's picture (w x h, three planes) copied into its frame's place. */
static int put(sink *s, int64_t i, const uint8_t *const planes[3], const int strides[3], int w,
               int h)
{
    const reader__track *t = s->t;
    if (i < 0 || i >= t->count)
        return reader__fail(s->in, "%s gave a picture for sample %lld, of %d", s->decoder,
                            (long long)i, t->count);
    int frame = s->slot[i];
    if (w != t->width || h != t->height)
        return reader__fail(s->in, "frame %d decodes as %d x %d, the track says %d x %d", frame,
                            w, h, t->width, t->height);
    if (s->done[frame])
        return reader__fail(s->in, "%s gave frame %d twice", s->decoder, frame);
    s->done[frame] = true;
    uint8_t *out = s->pictures + (size_t)frame * reader_picture_size(w, h);
    for (int p = 0; p < 3; p++) {
        int pw = p ? (w + 1) / 2 : w, ph = p ? (h + 1) / 2 : h;
        for (int y = 0; y < ph; y++, out += pw)
            memcpy(out, planes[p] + (size_t)y * (size_t)strides[p], (size_t)pw);
    }
    return 0;
}
#endif

#if READER_OPENH264
/* OpenH264's picture, where it gave one. */
static int put_h264(sink *s, const SBufferInfo *info, uint8_t *const dst[3])
{
    if (info->iBufferStatus != 1)
        return 0;
    const SSysMEMBuffer *b = &info->UsrData.sSystemBuffer;
    const uint8_t *planes[3] = {dst[0], dst[1], dst[2]};
    int strides[3] = {b->iStride[0], b->iStride[1], b->iStride[1]};
    if (b->iFormat != videoFormatI420)
        return reader__fail(s->in, "OpenH264 gave a picture of format %d, not I420", b->iFormat);
    return put(s, (int64_t)info->uiOutYuvTimeStamp, planes, strides, b->iWidth, b->iHeight);
}

/* Sample i as Annex B into buf (room enough): the parameter sets first
 * where it is a key frame; its length. */
static size_t annex_b(const reader__in *in, const reader__track *t, int i, uint8_t *buf)
{
    static const uint8_t start[4] = {0, 0, 0, 1};
    size_t n = 0;
    for (int k = 0; t->samples[i].key && k < t->params_count; k++) {
        memcpy(buf + n, start, 4);
        memcpy(buf + n + 4, t->params[k], t->params_size[k]);
        n += 4 + t->params_size[k];
    }
    const uint8_t *p = in->p + t->samples[i].offset;
    size_t ls = (size_t)t->nal_length_size;
    for (size_t at = 0; at < t->samples[i].size;) { /* lengths checked by the parser */
        size_t len = 0;
        for (size_t k = 0; k < ls; k++)
            len = len << 8 | p[at + k];
        memcpy(buf + n, start, 4);
        memcpy(buf + n + 4, p + at + ls, len);
        n += 4 + len;
        at += ls + len;
    }
    return n;
}

static int decode_h264(sink *s)
{
    const reader__track *t = s->t;
    ISVCDecoder *d = NULL;
    if (WelsCreateDecoder(&d) != 0 || !d)
        return reader__fail(s->in, "OpenH264 cannot make a decoder");
    int quiet = WELS_LOG_QUIET;
    (*d)->SetOption(d, DECODER_OPTION_TRACE_LEVEL, &quiet);
    SDecodingParam param;
    memset(&param, 0, sizeof param);
    param.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
    param.eEcActiveIdc = ERROR_CON_DISABLE;
    int rc = 0;
    if ((*d)->Initialize(d, &param) != 0) {
        WelsDestroyDecoder(d);
        return reader__fail(s->in, "OpenH264 cannot start its decoder");
    }
    size_t params = 0, largest = 0;
    for (int k = 0; k < t->params_count; k++)
        params += 4 + t->params_size[k];
    for (int i = 0; i < t->count; i++)
        largest = t->samples[i].size > largest ? t->samples[i].size : largest;
    /* Each NAL unit takes a length of one byte at least, and gains 4. */
    uint8_t *buf = malloc(params + 5 * largest + 1);
    if (!buf)
        rc = reader__fail(s->in, "out of memory for a sample of %zu bytes", largest);
    for (int i = 0; rc == 0 && i < t->count; i++) {
        size_t n = annex_b(s->in, t, i, buf);
        if (n > INT_MAX) {
            rc = reader__fail(s->in, "frame %d's sample is %zu bytes as Annex B: more than "
                                     "OpenH264 takes",
                              i, n);
            break;
        }
        uint8_t *dst[3] = {NULL, NULL, NULL};
        SBufferInfo info;
        memset(&info, 0, sizeof info);
        info.uiInBsTimeStamp = (unsigned long long)i;
        DECODING_STATE st = (*d)->DecodeFrameNoDelay(d, buf, (int)n, dst, &info);
        if (st != dsErrorFree)
            rc = reader__fail(s->in, "OpenH264 cannot decode frame %d's sample (%zu bytes as "
                                     "Annex B): decoding state 0x%x",
                              i, n, (unsigned)st);
        else
            rc = put_h264(s, &info, dst);
    }
    /* A decoder that reorders (a profile past Baseline) holds pictures
     * back until the stream's end. */
    int end = 1;
    (*d)->SetOption(d, DECODER_OPTION_END_OF_STREAM, &end);
    for (int k = 0; rc == 0 && k < t->count; k++) {
        int left = 0;
        if ((*d)->GetOption(d, DECODER_OPTION_NUM_OF_FRAMES_REMAINING_IN_BUFFER, &left) != 0 ||
            left <= 0)
            break;
        uint8_t *dst[3] = {NULL, NULL, NULL};
        SBufferInfo info;
        memset(&info, 0, sizeof info);
        (*d)->FlushFrame(d, dst, &info);
        rc = put_h264(s, &info, dst);
    }
    free(buf);
    (*d)->Uninitialize(d);
    WelsDestroyDecoder(d);
    return rc;
}
#endif

#if READER_VPX
static int decode_vpx(sink *s)
{
    const reader__track *t = s->t;
    vpx_codec_ctx_t ctx;
    vpx_codec_dec_cfg_t cfg = {.threads = 1, .w = (unsigned)t->width, .h = (unsigned)t->height};
    vpx_codec_iface_t *iface = t->codec == READER__VP9 ? vpx_codec_vp9_dx() : vpx_codec_vp8_dx();
    if (vpx_codec_dec_init(&ctx, iface, &cfg, 0) != VPX_CODEC_OK)
        return reader__fail(s->in, "libvpx cannot start its %s decoder: %s", s->decoder,
                            vpx_codec_error(&ctx));
    int rc = 0;
    for (int i = 0; rc == 0 && i < t->count; i++) {
        const reader__sample *f = &t->samples[i];
        if (vpx_codec_decode(&ctx, s->in->p + f->offset, f->size, NULL, 0) != VPX_CODEC_OK) {
            const char *detail = vpx_codec_error_detail(&ctx);
            rc = reader__fail(s->in, "libvpx cannot decode frame %d (%u bytes): %s%s%s", i,
                              (unsigned)f->size, vpx_codec_error(&ctx), detail ? ": " : "",
                              detail ? detail : "");
            break;
        }
        vpx_codec_iter_t iter = NULL;
        int pictures = 0;
        for (vpx_image_t *img; rc == 0 && (img = vpx_codec_get_frame(&ctx, &iter));) {
            if (++pictures > 1)
                rc = reader__fail(s->in, "frame %d decodes into two pictures", i);
            else if (img->fmt != VPX_IMG_FMT_I420)
                rc = reader__fail(s->in, "frame %d decodes to libvpx's format 0x%x, not I420 "
                                         "(8 bits, 4:2:0)",
                                  i, (unsigned)img->fmt);
            else
                rc = put(s, i, (const uint8_t *const *)img->planes, img->stride, (int)img->d_w,
                         (int)img->d_h);
        }
        if (rc == 0 && pictures == 0)
            rc = reader__fail(s->in, "frame %d decodes into no picture (a frame not shown)", i);
    }
    vpx_codec_destroy(&ctx);
    return rc;
}
#endif

int reader__decode(reader__in *in, const reader__track *t, const int *slot, uint8_t *pictures)
{
    static const char *const decoders[] = {[READER__H264] = "OpenH264", [READER__VP8] = "VP8",
                                           [READER__VP9] = "VP9"};
    sink s = {.in = in, .t = t, .slot = slot, .pictures = pictures,
              .done = calloc((size_t)t->count + 1, sizeof(bool)),
              .decoder = decoders[t->codec]};
    if (!s.done)
        return reader__fail(in, "out of memory for %d frames", t->count);
    int rc;
#if READER_OPENH264
    if (t->codec == READER__H264)
        rc = decode_h264(&s);
#else
    if (t->codec == READER__H264)
        rc = reader__fail(in, "this reader was built without OpenH264 (Debian's "
                              "libopenh264-dev): it cannot decode H.264");
#endif
#if READER_VPX
    else
        rc = decode_vpx(&s);
#else
    else
        rc = reader__fail(in, "this reader was built without libvpx (Debian's libvpx-dev): it "
                              "cannot decode %s",
                          t->codec == READER__VP9 ? "VP9" : "VP8");
#endif
    for (int f = 0; rc == 0 && f < t->count; f++)
        if (!s.done[f])
            rc = reader__fail(in, "%s gave no picture for frame %d (of %d)", s.decoder, f,
                              t->count);
    free(s.done);
    return rc;
}
