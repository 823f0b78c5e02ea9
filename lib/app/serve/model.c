/*
 * model.c - what the frame server's files share of its model: the levels
 * of JPEG a viewer may get, and text made safe for the frames' JSON.
 */
#include <stdio.h>

#include "server.h"

const serve_level cugl__serve_levels[LEVELS] = {
    {100, 1, 1.0},  {70, 1, 0.6},  {55, 1, 0.45}, {40, 1, 0.33},  {70, 2, 0.17},
    {50, 2, 0.12},  {35, 2, 0.09}, {60, 4, 0.05}, {40, 4, 0.035}, {25, 4, 0.025},
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
