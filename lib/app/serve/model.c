/*
 * model.c - what the frame server's files share of its model: the levels
 * of JPEG a viewer may get, the video codecs, and text made safe for the
 * frames' JSON.
 */
#include <stdio.h>

#include "server.h"

/* Quality first, then size, each step where the picture the page shows
 * (scaled back up) is the best for its bytes. Measured on
 * tests/serve/pattern.h's 1280x720 picture (libjpeg-turbo, 4:2:0; PSNR of
 * what the page shows against the picture): full size at quality 85 273 kB
 * 33.8 dB, 70 156 kB 31.9, 40 86 kB 30.5, 30 66 kB 29.9; half size at 85
 * 55 kB 29.7, 70 36 kB 29.2, 50 27 kB 28.7, 35 22 kB 28.1, 20 16 kB 26.6;
 * a quarter at 60 11 kB 25.0, 40 8.5 kB 24.1, 25 6.7 kB 22.3. Without the
 * steps at 66 and 55 kB (full size at 30, half at 85) a link that carried
 * 80 kB a frame got half size at 70 (36 kB, 29.2 dB), where full size at
 * 30 fits (29.9 dB) and uses the link; half size at 20 is worth more than a
 * quarter at 85 (17 kB, 26.2 dB). */
const serve_level cugl__serve_levels[LEVELS] = {
    {100, 1, 1.0},  {70, 1, 0.57},  {55, 1, 0.42},  {40, 1, 0.31},
    {30, 1, 0.24},  {85, 2, 0.2},   {70, 2, 0.13},  {50, 2, 0.098},
    {35, 2, 0.08},  {20, 2, 0.06},  {60, 4, 0.039}, {40, 4, 0.031},
};

const cugl__video_codec_info cugl__video_codecs[CUGL__VIDEO_CODECS] = {
    [CUGL__VIDEO_VP8] = {"vp8", "VP8", "libvpx", CUGL_SERVE_VP8},
    [CUGL__VIDEO_H264] = {"h264", "H.264", "OpenH264", CUGL_SERVE_H264},
    [CUGL__VIDEO_VP9] = {"vp9", "VP9", "libvpx", CUGL_SERVE_VP8},
};

/* `text` as the inside of a JSON string, cut to fit `size`. */
void cugl__serve_json_escape(char *out, size_t size, const char *text)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c && n + 7 < size; c++) {
        if (*c == '"' || *c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)*c;
        } else if (*c < 0x20) {
            n += (size_t)snprintf(out + n, size - n, "\\u%04x", *c);
        } else {
            out[n++] = (char)*c;
        }
    }
    out[n] = '\0';
}
