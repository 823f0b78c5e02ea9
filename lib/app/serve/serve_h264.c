/*
 * serve_h264.c - the frame server's H.264 encoder (serve_internal.h):
 * OpenH264 (Cisco's, BSD-licensed; Debian's libopenh264), Constrained
 * Baseline, for the pages whose WebCodecs decode H.264. Real time and low
 * latency as the VP8 stream is (serve_video.c): one frame in, one frame out
 * (Baseline has no B-frames, and no frame is skipped to keep the rate),
 * rate control to the viewer's bitrate, an IDR frame with its SPS and PPS
 * at the start and whenever asked. Each access unit comes out in Annex B
 * (a start code before each NAL unit), as WebCodecs takes H.264 without a
 * description.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wels/codec_api.h>

#include "serve_internal.h"

struct cugl__h264 {
    ISVCEncoder *encoder;
    int width, height, bps;
    float fps;
};

void cugl__h264_close(cugl__h264 *e)
{
    if (!e)
        return;
    if (e->encoder) {
        (*e->encoder)->Uninitialize(e->encoder);
        WelsDestroySVCEncoder(e->encoder);
    }
    free(e);
}

/* Bits a second from kbit/s, within what OpenH264 takes. */
static int bps_of(int kbps)
{
    return kbps < 1 ? 1000 : kbps > INT_MAX / 1000 ? INT_MAX / 1000 * 1000 : kbps * 1000;
}

cugl__h264 *cugl__h264_open(int w, int h, double fps, int kbps, int threads, char *why,
                             size_t why_size)
{
    cugl__h264 *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(why, why_size, "no memory for an H.264 encoder");
        return NULL;
    }
    if (WelsCreateSVCEncoder(&e->encoder) != 0 || !e->encoder) {
        e->encoder = NULL;
        cugl__h264_close(e);
        snprintf(why, why_size, "OpenH264 cannot make an encoder");
        return NULL;
    }
    e->width = w;
    e->height = h;
    e->bps = bps_of(kbps);
    e->fps = (float)(fps > 0 ? (fps < 1 ? 1 : fps > 60 ? 60 : fps) : 60);
    /* OpenH264 writes its traces to stderr (a warning at each start that
     * the rate cannot be held without skipping frames: frames keep close
     * to it here, as serve-codecs measures); a library writes none. */
    int quiet = WELS_LOG_QUIET;
    (*e->encoder)->SetOption(e->encoder, ENCODER_OPTION_TRACE_LEVEL, &quiet);
    SEncParamExt p;
    (*e->encoder)->GetDefaultParams(e->encoder, &p);
    /* Camera content: the programs' pictures are rendered scenes, not a
     * desktop's text (SCREEN_CONTENT_REAL_TIME's tools are for that). */
    p.iUsageType = CAMERA_VIDEO_REAL_TIME;
    p.iPicWidth = w;
    p.iPicHeight = h;
    p.iTargetBitrate = e->bps;
    p.iMaxBitrate = UNSPECIFIED_BIT_RATE;
    p.iRCMode = RC_BITRATE_MODE;
    p.fMaxFrameRate = e->fps;
    p.bEnableFrameSkip = false; /* one frame in, one frame out */
    p.iTemporalLayerNum = 1;
    p.iSpatialLayerNum = 1;
    p.uiIntraPeriod = 0; /* IDR frames at the start and when asked */
    p.eSpsPpsIdStrategy = CONSTANT_ID;
    p.iEntropyCodingModeFlag = 0; /* CAVLC: Baseline */
    p.iNumRefFrame = 1;
    p.bEnableLongTermReference = false;
    p.bEnableDenoise = false;
    p.bEnableSceneChangeDetect = false; /* no IDR frame unasked */
    p.bEnableBackgroundDetection = true;
    p.bEnableAdaptiveQuant = true;
    p.bPrefixNalAddingCtrl = false;
    p.iComplexityMode = LOW_COMPLEXITY;
    /* Slices on threads, as VP8's rows (not the same bytes from run to run). */
    threads = threads > 1 ? threads : 1;
    p.iMultipleThreadIdc = (unsigned short)threads;
    SSpatialLayerConfig *l = &p.sSpatialLayers[0];
    l->iVideoWidth = w;
    l->iVideoHeight = h;
    l->fFrameRate = e->fps;
    l->iSpatialBitrate = e->bps;
    l->iMaxSpatialBitrate = UNSPECIFIED_BIT_RATE;
    l->uiProfileIdc = PRO_BASELINE;
    l->uiLevelIdc = LEVEL_UNKNOWN; /* the least that holds the size and rate */
    l->sSliceArgument.uiSliceMode = threads > 1 ? SM_FIXEDSLCNUM_SLICE : SM_SINGLE_SLICE;
    l->sSliceArgument.uiSliceNum = (unsigned)threads;
    /* BT.601 limited range, as serve_video.c makes the picture. */
    l->bVideoSignalTypePresent = true;
    l->uiVideoFormat = 5; /* unspecified */
    l->bFullRange = false;
    l->bColorDescriptionPresent = true;
    l->uiColorPrimaries = 6;          /* SMPTE 170M */
    l->uiTransferCharacteristics = 6; /* SMPTE 170M */
    l->uiColorMatrix = 6;             /* SMPTE 170M: BT.601 */
    int rc = (*e->encoder)->InitializeExt(e->encoder, &p);
    int format = videoFormatI420;
    if (rc == cmResultSuccess)
        rc = (*e->encoder)->SetOption(e->encoder, ENCODER_OPTION_DATAFORMAT, &format);
    if (rc != cmResultSuccess) {
        cugl__h264_close(e);
        snprintf(why, why_size, "OpenH264 cannot start a %d x %d H.264 encoder (error %d)", w,
                 h, rc);
        return NULL;
    }
    return e;
}

unsigned char *cugl__h264_encode(cugl__h264 *e, uint8_t *const planes[3], const int strides[3],
                                 long long ms, double fps, int kbps, bool key, size_t *size,
                                 bool *is_key, char *why, size_t why_size)
{
    *size = 0;
    *is_key = false;
    int bps = bps_of(kbps);
    if (bps != e->bps) {
        SBitrateInfo rate = {.iLayer = SPATIAL_LAYER_ALL, .iBitrate = bps};
        if ((*e->encoder)->SetOption(e->encoder, ENCODER_OPTION_BITRATE, &rate) ==
            cmResultSuccess)
            e->bps = bps;
    }
    /* The program's rate, measured, moves a little every frame: the
     * encoder's is set anew only where it moved by a tenth. */
    float rate = (float)(fps > 0 ? (fps < 1 ? 1 : fps > 60 ? 60 : fps) : e->fps);
    if (fabsf(rate - e->fps) > 0.1f * e->fps &&
        (*e->encoder)->SetOption(e->encoder, ENCODER_OPTION_FRAME_RATE, &rate) ==
            cmResultSuccess)
        e->fps = rate;
    if (key)
        (*e->encoder)->ForceIntraFrame(e->encoder, true);
    SSourcePicture pic = {.iColorFormat = videoFormatI420,
                          .iPicWidth = e->width,
                          .iPicHeight = e->height,
                          .uiTimeStamp = ms};
    for (int i = 0; i < 3; i++) {
        pic.pData[i] = planes[i];
        pic.iStride[i] = strides[i];
    }
    SFrameBSInfo info;
    memset(&info, 0, sizeof info);
    int rc = (*e->encoder)->EncodeFrame(e->encoder, &pic, &info);
    if (rc != cmResultSuccess) {
        snprintf(why, why_size, "H.264 encoding failed (OpenH264 error %d)", rc);
        return NULL;
    }
    if (info.eFrameType == videoFrameTypeSkip || info.eFrameType == videoFrameTypeInvalid ||
        info.iFrameSizeInBytes <= 0) {
        snprintf(why, why_size, "the H.264 encoder gave no frame");
        return NULL;
    }
    /* The layers' NAL units, each after its start code, one after
     * another: the access unit. */
    unsigned char *out = malloc((size_t)info.iFrameSizeInBytes);
    if (!out) {
        snprintf(why, why_size, "no memory for an H.264 frame");
        return NULL;
    }
    for (int i = 0; i < info.iLayerNum; i++) {
        const SLayerBSInfo *layer = &info.sLayerInfo[i];
        size_t bytes = 0;
        for (int n = 0; n < layer->iNalCount; n++)
            bytes += (size_t)layer->pNalLengthInByte[n];
        if (*size + bytes > (size_t)info.iFrameSizeInBytes) {
            free(out);
            snprintf(why, why_size, "the H.264 encoder's layers overrun its frame");
            return NULL;
        }
        memcpy(out + *size, layer->pBsBuf, bytes);
        *size += bytes;
    }
    *is_key = info.eFrameType == videoFrameTypeIDR;
    return out;
}
