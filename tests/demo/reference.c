/*
 * reference.c - see reference.h. Built with floating-point contraction off,
 * so every operation rounds once, as the kernels' do.
 */
#include "reference.h"

#include "julia_math.h"
#include "sinewave_math.h"

float demo_reference_time(long frame)
{
    return (float)frame / 60.0f;
}

void sinewave_reference(float *vertices, int n, float t)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            sinewave_vertex(vertices + ((size_t)j * (size_t)n + (size_t)i) * SINEWAVE_VERTEX_FLOATS,
                            i, j, n, t);
}

void julia_reference(uint8_t *rgba, int width, int height, long frame)
{
    julia_view view = julia_view_default();
    julia_params p = julia_params_for(&view, frame, width, height);
    for (int row = 0; row < height; row++) {
        /* PNG row 0 is the top; the kernel's row 0 (GL's) is the bottom. */
        int y = height - 1 - row;
        for (int x = 0; x < width; x++) {
            julia_rgba c = julia_pixel(x, y, &p);
            uint8_t *px = rgba + ((size_t)row * (size_t)width + (size_t)x) * 4;
            px[0] = c.r;
            px[1] = c.g;
            px[2] = c.b;
            px[3] = c.a;
        }
    }
}
