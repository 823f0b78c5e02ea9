#version 450 core
// Baseline JPEG, first pass (the frame server's JPEG encoder in GL,
// jpeg_gl.c): one 16 x 16 MCU of an RGBA8 picture a work group (x, y the
// MCU's column and row), 4:2:0.
// Colour to YCbCr (JFIF), chroma averaged over 2 x 2, each of the MCU's six
// 8 x 8 blocks (Y00 Y10 Y01 Y11 Cb Cr) through the DCT (separable: rows
// then columns, in shared memory), quantized, stored in zig-zag order as
// 16-bit integers, two a word: 192 words an MCU. Texels past the picture's
// edge repeat its last row and column, as libjpeg pads. Beside them, a
// mask of each block's coefficients that are not zero (bit k of its two
// words: zig-zag place k), from which the coding pass finds the zero run
// before each coefficient.
layout(local_size_x = 64) in;
layout(binding = 0) uniform sampler2D image; // rows top first, or bottom first where `flip`
layout(std430, binding = 0) writeonly buffer Coefficients { uint coef[]; };
layout(std430, binding = 6) writeonly buffer Masks { uint masks[]; };
layout(location = 0) uniform ivec2 size;     // the picture's, in texels
layout(location = 1) uniform int mcus_x;     // MCUs a row
// The quantizer of each coefficient in natural order (row = vertical
// frequency), luma's 64 then chroma's, and each natural index's place in
// zig-zag order.
layout(location = 2) uniform float quantizer[128];
layout(location = 130) uniform int zigzag[64];
layout(location = 194) uniform bool flip;

shared float samples[6][64];
shared float rows[6][64];
shared int quantized[6][64];
shared uint nonzero[6][2];

const float PI = 3.14159265358979;

// The DCT's basis, scaled: C(u) / 2 cos((2 i + 1) u pi / 16).
float basis(int u, int i)
{
    float c = cos(float((2 * i + 1) * u) * PI / 16.0);
    return u == 0 ? c * 0.35355339 : c * 0.5;
}

void main()
{
    int t = int(gl_LocalInvocationIndex);
    int x = t & 7, y = t >> 3;
    int mcu = int(gl_WorkGroupID.y) * mcus_x + int(gl_WorkGroupID.x);
    ivec2 origin = ivec2(gl_WorkGroupID.xy) * 16;
    // The 2 x 2 texels at (2x, 2y) of the MCU: their Y, and their chroma's mean.
    float cb = 0.0, cr = 0.0;
    for (int dy = 0; dy < 2; dy++) {
        for (int dx = 0; dx < 2; dx++) {
            ivec2 p = ivec2(2 * x + dx, 2 * y + dy);
            ivec2 at = min(origin + p, size - 1);
            vec3 c = texelFetch(image, flip ? ivec2(at.x, size.y - 1 - at.y) : at, 0).rgb * 255.0;
            int block = (p.x >> 3) + 2 * (p.y >> 3);
            samples[block][(p.y & 7) * 8 + (p.x & 7)] =
                dot(c, vec3(0.299, 0.587, 0.114)) - 128.0;
            cb += dot(c, vec3(-0.168735892, -0.331264108, 0.5));
            cr += dot(c, vec3(0.5, -0.418687589, -0.081312411));
        }
    }
    if (t < 12)
        nonzero[t >> 1][t & 1] = 0u;
    samples[4][t] = cb * 0.25; // centred on 0: the level shift of 128 and
    samples[5][t] = cr * 0.25; // chroma's offset of 128 cancel
    float bx[8], by[8];
    for (int i = 0; i < 8; i++) {
        bx[i] = basis(x, i);
        by[i] = basis(y, i);
    }
    barrier();
    // Rows: frequency x of row y.
    for (int b = 0; b < 6; b++) {
        float s = 0.0;
        for (int i = 0; i < 8; i++)
            s += samples[b][y * 8 + i] * bx[i];
        rows[b][t] = s;
    }
    barrier();
    // Columns: vertical frequency y, horizontal x; quantized, to zig-zag order.
    int place = zigzag[t];
    for (int b = 0; b < 6; b++) {
        float s = 0.0;
        for (int j = 0; j < 8; j++)
            s += rows[b][j * 8 + x] * by[j];
        int q = int(round(s / quantizer[(b < 4 ? 0 : 64) + t]));
        quantized[b][place] = t == 0 ? clamp(q, -2047, 2047) : clamp(q, -1023, 1023);
        if (q != 0)
            atomicOr(nonzero[b][place >> 5], 1u << (place & 31));
    }
    barrier();
    // Two coefficients a word, the lower one in the low half.
    for (int w = t; w < 192; w += 64) {
        int b = w >> 5, k = (w & 31) * 2;
        coef[mcu * 192 + w] = (uint(quantized[b][k]) & 0xffffu) | (uint(quantized[b][k + 1]) << 16);
    }
    if (t < 12)
        masks[mcu * 12 + t] = nonzero[t >> 1][t & 1];
}
