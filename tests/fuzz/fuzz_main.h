/*
 * fuzz_main.h - what the fuzz targets share: the libFuzzer entry point and,
 * built without libFuzzer, a bounded seeded loop that runs anywhere (also
 * under the sanitizers):
 *
 *   fuzz_<name> [seconds]     (default 10; CUGL_TEST_SEED sets the seed)
 *
 * A target defines, before including this:
 *   static void run_one(const uint8_t *data, size_t size);
 *   static size_t generate(oracle_rng *rng, uint8_t *buf, size_t cap);
 * run_one aborts (after a line on stderr) on a violated property; generate
 * makes the loop's inputs, mostly near-valid ones a random byte string
 * would seldom hit, which libFuzzer finds by itself from its coverage.
 */
#ifndef CUGL_FUZZ_MAIN_H
#define CUGL_FUZZ_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layout_oracle.h"

enum { FUZZ_MAX_INPUT = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_one(data, size);
    return 0;
}

#ifndef CUGL_LIBFUZZER
int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    const char *s = getenv("CUGL_TEST_SEED");
    oracle_rng rng = {s ? strtoull(s, NULL, 0) : 0x0f022e5eedull};
    printf("1..1\n# seed 0x%llx, %.0f s\n", (unsigned long long)rng.s, seconds);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static uint8_t buf[FUZZ_MAX_INPUT];
    long inputs = 0;
    do {
        size_t n = generate(&rng, buf, sizeof buf);
        run_one(buf, n);
        inputs++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    printf("ok 1 - %ld inputs, no violation\n", inputs);
    return 0;
}
#endif

/* Abort with a line naming the target and what was violated. */
#define FUZZ_VIOLATED(...)                                                                 \
    do {                                                                                   \
        fprintf(stderr, "fuzz: " __VA_ARGS__);                                             \
        fprintf(stderr, "\n");                                                             \
        abort();                                                                           \
    } while (0)

/* The input read byte by byte; past its end, zeros. */
typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n;
} fuzz_reader;

static inline uint8_t fuzz_u8(fuzz_reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

/* Eight bytes, most significant first. */
static inline int64_t fuzz_raw64(fuzz_reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | fuzz_u8(r);
    return (int64_t)v;
}

/* The input (its first FUZZ_MAX_INPUT bytes) copied into
 * text[FUZZ_MAX_INPUT + 1] with a NUL after it. */
static inline char *fuzz_text(char *text, const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        size = FUZZ_MAX_INPUT;
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

/* Append `text` to buf[*len .. cap). */
static inline void fuzz_put(uint8_t *buf, size_t *len, size_t cap, const char *text)
{
    for (; *text && *len < cap; text++)
        buf[(*len)++] = (uint8_t)*text;
}

#endif /* CUGL_FUZZ_MAIN_H */
