/*
 * postprocess_math.h - the postprocess demo's filters, pixel by pixel,
 * shared by its kernels (postprocess.cu) and the C reference the tests
 * compare them with.
 *
 * Images are RGBA8; a read outside the image takes the nearest edge pixel.
 * The filters:
 *
 *   blur   a separable Gaussian of radius r (1 .. PP_MAX_RADIUS taps each
 *          side, sigma r / 2.5): the rows into a float image, then its
 *          columns back to RGBA8
 *   edges  the Sobel gradient of the luma; its magnitude lights the
 *          brightest colour about the pixel, on black
 *   both   blur, then edges of the blurred image
 *
 * Every sum is spelt out with demo_math.h's operations in one order, so the
 * kernels and the reference round alike, bit for bit. Taps at the same
 * distance either side are added first (a + b rounds as b + a), which makes
 * each filter commute with turning the image upside down: a PNG's rows, top
 * first, filter to the same bytes as GL's, bottom first.
 */
#ifndef CUGL_POSTPROCESS_MATH_H
#define CUGL_POSTPROCESS_MATH_H

#include "demo_math.h"

enum {
    PP_MAX_RADIUS = 32,
    PP_DEFAULT_RADIUS = 6,
};

typedef enum pp_filter {
    PP_FILTER_NONE = 0,
    PP_FILTER_BLUR = 1,
    PP_FILTER_EDGES = 2,
    PP_FILTER_BOTH = 3,
} pp_filter;

#define PP_SIGMA_PER_RADIUS 0.4f /* sigma = 0.4 r: the last tap weighs e^-3.125 */
#define PP_EDGE_GAIN 0.004f      /* a luma step of 62.5 levels is a full edge */
#define PP_EDGE_FLOOR 64.0f      /* an edge of a black pixel still shows */
#define PP_EDGE_COLOUR 0.75f     /* how much of the colour about it an edge takes */

/* One pixel, as uchar4 holds it. */
typedef struct pp_rgba {
    unsigned char r, g, b, a;
} pp_rgba;

/* A pixel of the blur's intermediate image, in 0 .. 255 (float4's x, y, z). */
typedef struct pp_rgbf {
    float r, g, b;
} pp_rgbf;

/* A kernel argument: the Gaussian's weights, weight[k] for each of the taps
 * at -k and +k, summing to 1 over all 2 radius + 1 taps. */
typedef struct pp_blur {
    int radius;
    float weight[PP_MAX_RADIUS + 1];
} pp_blur;

/* Coordinate v clamped into an image n pixels long. */
DEMO_FN int pp_clamp(int v, int n)
{
    return v < 0 ? 0 : v >= n ? n - 1 : v;
}

/* The weights of a Gaussian of `radius` taps each side (clamped to 1 .. PP_MAX_RADIUS). */
DEMO_FN pp_blur pp_blur_make(int radius)
{
    pp_blur b;
    b.radius = radius < 1 ? 1 : radius > PP_MAX_RADIUS ? PP_MAX_RADIUS : radius;
    float sigma = demo_mul(PP_SIGMA_PER_RADIUS, (float)b.radius);
    float scale = -0.5f / demo_mul(sigma, sigma);
    float sum = 0.0f;
    for (int k = 0; k <= PP_MAX_RADIUS; k++) {
        b.weight[k] = k <= b.radius ? expf(demo_mul(scale, (float)(k * k))) : 0.0f;
        sum = demo_add(sum, k == 0 ? b.weight[k] : demo_mul(2.0f, b.weight[k]));
    }
    for (int k = 0; k <= b.radius; k++)
        b.weight[k] = b.weight[k] / sum;
    return b;
}

DEMO_FN pp_rgbf pp_rgbf_of(pp_rgba p)
{
    pp_rgbf f = {(float)p.r, (float)p.g, (float)p.b};
    return f;
}

/* The centre tap: w c. */
DEMO_FN pp_rgbf pp_blur_centre(float w, pp_rgbf c)
{
    pp_rgbf f = {demo_mul(w, c.r), demo_mul(w, c.g), demo_mul(w, c.b)};
    return f;
}

/* The taps at -k and +k: sum + w (a + b). */
DEMO_FN pp_rgbf pp_blur_pair(pp_rgbf sum, float w, pp_rgbf a, pp_rgbf b)
{
    pp_rgbf f = {demo_add(sum.r, demo_mul(w, demo_add(a.r, b.r))),
                 demo_add(sum.g, demo_mul(w, demo_add(a.g, b.g))),
                 demo_add(sum.b, demo_mul(w, demo_add(a.b, b.b)))};
    return f;
}

/* 0 .. 255 to a byte, rounded to nearest. */
DEMO_FN unsigned char pp_byte(float v)
{
    return (unsigned char)demo_add(fminf(fmaxf(v, 0.0f), 255.0f), 0.5f);
}

/* An opaque pixel of the blurred image. */
DEMO_FN pp_rgba pp_rgba_of(pp_rgbf f)
{
    pp_rgba p = {pp_byte(f.r), pp_byte(f.g), pp_byte(f.b), 255};
    return p;
}

/* Rec. 601 luma in 0 .. 255. */
DEMO_FN float pp_luma(pp_rgba p)
{
    return demo_add(demo_add(demo_mul(0.299f, (float)p.r), demo_mul(0.587f, (float)p.g)),
                    demo_mul(0.114f, (float)p.b));
}

/* a + 2 m + b: one column or row of a Sobel kernel, the outer taps first. */
DEMO_FN float pp_sobel_line(float a, float m, float b)
{
    return demo_add(demo_add(a, b), demo_mul(2.0f, m));
}

/* The brighter of two pixels, channel by channel. */
DEMO_FN pp_rgba pp_max(pp_rgba a, pp_rgba b)
{
    pp_rgba p = {a.r > b.r ? a.r : b.r, a.g > b.g ? a.g : b.g, a.b > b.b ? a.b : b.b, 255};
    return p;
}

/* The edge light of one channel of colour c at strength e in [0, 1]. */
DEMO_FN unsigned char pp_edge_channel(float e, unsigned char c)
{
    return pp_byte(demo_mul(e, demo_add(PP_EDGE_FLOOR, demo_mul(PP_EDGE_COLOUR, (float)c))));
}

/*
 * The edge pixel of a 3 x 3 neighbourhood n, rows y - 1, y, y + 1 and in
 * each x - 1, x, x + 1: the Sobel magnitude of the luma, times the gain,
 * lights the neighbourhood's brightest colour (lifted by a floor) on black,
 * so that an object's outline takes the object's colour on both sides.
 */
DEMO_FN pp_rgba pp_edge(const pp_rgba n[9])
{
    float l[9];
    pp_rgba c = n[0];
    for (int i = 0; i < 9; i++) {
        l[i] = pp_luma(n[i]);
        c = pp_max(c, n[i]);
    }
    float gx = demo_sub(pp_sobel_line(l[2], l[5], l[8]), pp_sobel_line(l[0], l[3], l[6]));
    float gy = demo_sub(pp_sobel_line(l[6], l[7], l[8]), pp_sobel_line(l[0], l[1], l[2]));
    float magnitude = sqrtf(demo_add(demo_mul(gx, gx), demo_mul(gy, gy)));
    float e = demo_clamp01(demo_mul(magnitude, PP_EDGE_GAIN));
    pp_rgba p = {pp_edge_channel(e, c.r), pp_edge_channel(e, c.g), pp_edge_channel(e, c.b), 255};
    return p;
}

#endif /* CUGL_POSTPROCESS_MATH_H */
