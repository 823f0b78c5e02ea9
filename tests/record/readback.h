/*
 * readback.h - what the recorder's tests share to read a file back: the
 * tests' own reader (reader.h), always; ffprobe and ffmpeg, where the
 * environment's FFPROBE and FFMPEG name them, seen through the same
 * struct and held to agree with the reader; the PSNR of pictures; and a
 * file damaged every way a seeded loop can, which the reader must refuse
 * with a reason or read as a sane file.
 *
 * Each fails the running cmocka test with what it found.
 */
#ifndef RECORD_READBACK_H
#define RECORD_READBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"

/* The reader's view of `path`, every frame decoded where `decode`. */
void readback_read(reader_video *out, const char *path, bool decode);

/* Whether FFPROBE and FFMPEG name programs to cross-check with; where
 * not, a "#" line says that the reader alone read the file back. */
bool readback_tools(void);

/* ffprobe's view of `path` as the reader's struct: the codec, the size,
 * each packet's time and key flag (in presentation order); where
 * `decode`, every frame as ffmpeg decodes it (-pix_fmt yuv420p). */
void readback_probe(reader_video *out, const char *path, bool decode);

/* The reader's view and ffprobe's agree: the codec, the size, the number
 * of frames, each frame's time within 1 us, each key flag. */
void readback_agree(const reader_video *reader, const reader_video *probe);

/* What a command prints, whole (the caller frees it); it must exit 0. */
char *readback_output(const char *command);

/* The PSNR of two pictures of n bytes, in dB (99 where they are the same). */
double readback_psnr(const uint8_t *a, const uint8_t *b, size_t n);

/* The file (`name` in the messages) cut short at many points, each
 * refused with a reason; and copies with bytes changed (from `seed`),
 * each refused with a reason or read (some decoded) as a sane file. */
void readback_damage(const char *name, const uint8_t *file, size_t size, unsigned seed);

#endif /* RECORD_READBACK_H */
