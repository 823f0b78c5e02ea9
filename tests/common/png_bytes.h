/*
 * png_bytes.h - PNG files made byte by byte for the tests that bend them:
 * a chunk's CRC, and a header claiming any size.
 */
#ifndef CUGL_TEST_PNG_BYTES_H
#define CUGL_TEST_PNG_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* PNG's CRC-32 of a chunk's type and data. */
static inline uint32_t png_bytes_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c >> 1 ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static inline void png_bytes_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

enum { PNG_BYTES_IHDR = 8, PNG_BYTES_CLAIMING = 8 + 25 + 16 };

/* Set the size in the IHDR chunk at file[PNG_BYTES_IHDR] (as libpng writes
 * it, first after the signature), its CRC made right again. */
static inline void png_bytes_set_size(uint8_t *file, uint32_t width, uint32_t height)
{
    uint8_t *ihdr = file + PNG_BYTES_IHDR;
    png_bytes_be32(ihdr + 8, width);
    png_bytes_be32(ihdr + 12, height);
    png_bytes_be32(ihdr + 21, png_bytes_crc(ihdr + 4, 17));
}

/* A PNG of PNG_BYTES_CLAIMING bytes whose header claims width x height
 * RGBA8 pixels: the signature, IHDR, and an IDAT of four bytes that are
 * not zlib's. */
static inline void png_bytes_claiming(uint8_t file[PNG_BYTES_CLAIMING], uint32_t width,
                                      uint32_t height)
{
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(file, signature, 8);
    uint8_t *ihdr = file + PNG_BYTES_IHDR, *idat = ihdr + 25;
    png_bytes_be32(ihdr, 13);
    memcpy(ihdr + 4, "IHDR", 4);
    ihdr[16] = 8; /* depth */
    ihdr[17] = 6; /* RGBA */
    ihdr[18] = ihdr[19] = ihdr[20] = 0; /* compression, filter, interlace */
    png_bytes_set_size(file, width, height);
    png_bytes_be32(idat, 4);
    memcpy(idat + 4, "IDATjunk", 8);
    png_bytes_be32(idat + 12, png_bytes_crc(idat + 4, 8));
}

#endif /* CUGL_TEST_PNG_BYTES_H */
