/*
 * colormap.c - the colour maps (cugl/app_draw.h): 256 RGBA8 entries each,
 * made from stops joined by straight lines, as Python's cugl.colormap
 * makes them (python/cugl/_colormap.py: the same stops, the same rounding);
 * and the drawers' check of a colour.
 */
#include <string.h>

#include "app_internal.h"
#include "cugl/app_draw.h"

typedef struct stop {
    double t;
    int rgb[3];
} stop;

/* "cugl": dark to light, its brightness rising all the way. */
static const stop cugl_stops[] = {
    {0.00, {0, 0, 0}},       {0.20, {30, 20, 110}},  {0.45, {20, 130, 170}},
    {0.70, {120, 200, 90}},  {0.90, {250, 220, 60}}, {1.00, {255, 255, 255}},
};
static const stop grey_stops[] = {{0.0, {0, 0, 0}}, {1.0, {255, 255, 255}}};

static void ramp(const stop *stops, int n, uint8_t *rgba)
{
    for (int i = 0; i < 256; i++) {
        double t = i / 255.0;
        int k = 0;
        while (k + 2 < n && t > stops[k + 1].t)
            k++;
        double f = (t - stops[k].t) / (stops[k + 1].t - stops[k].t);
        for (int c = 0; c < 3; c++) {
            double a = stops[k].rgb[c], b = stops[k + 1].rgb[c];
            rgba[4 * i + c] = (uint8_t)(int)(a + (b - a) * f + 0.5);
        }
        rgba[4 * i + 3] = 255;
    }
}

cugl_status cugl__app_check_rgba(const float rgba[4], const char *who)
{
    if (!rgba)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who, "rgba is NULL");
    for (int c = 0; c < 4; c++)
        if (!(rgba[c] >= 0 && rgba[c] <= 1))
            return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, who,
                              "rgba[%d] is %g: each from 0 to 1", c, (double)rgba[c]);
    return CUGL_OK;
}

CUGL_API cugl_status cugl_app_colormap_table(cugl_app_colormap map, uint8_t rgba[1024])
{
    if (!rgba)
        return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__, "rgba is NULL");
    switch (map) {
    case CUGL_APP_COLORMAP_CUGL:
        ramp(cugl_stops, (int)(sizeof cugl_stops / sizeof cugl_stops[0]), rgba);
        return CUGL_OK;
    case CUGL_APP_COLORMAP_GREY:
        ramp(grey_stops, 2, rgba);
        return CUGL_OK;
    }
    return cugl__fail(CUGL_ERROR_INVALID_ARGUMENT, __func__,
                      "colour map %d: CUGL_APP_COLORMAP_CUGL (0) or CUGL_APP_COLORMAP_GREY (1)",
                      (int)map);
}
