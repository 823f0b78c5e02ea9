/*
 * reference.h - CPU references of the demos, from the same math as their
 * kernels (the headers in kernels/demos), for the tests to hold the GPU's output to.
 */
#ifndef CUGL_DEMO_REFERENCE_H
#define CUGL_DEMO_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* The time frame `frame` shows in a fixed-step run (demo.c): frame / 60 s. */
float demo_reference_time(long frame);

/* The sinewave grid at time t: n * n vertices of 6 floats, row by row. */
void sinewave_reference(float *vertices, int n, float t);

/*
 * The julia image of frame `frame` at the default view (a run without
 * input): width x height RGBA8 pixels, rows top to bottom as in a PNG.
 */
void julia_reference(uint8_t *rgba, int width, int height, long frame);

#endif /* CUGL_DEMO_REFERENCE_H */
