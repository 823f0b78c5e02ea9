#version 450 core
// Baseline JPEG, entropy coding (jpeg_gl.c): one restart interval an
// invocation, its MCUs one after another (DC predictions start again at
// each interval, so the intervals are independent). Run twice: counting
// (`writing` 0), each interval's length in bytes goes to `lengths`; then,
// once jpeg_scan.comp has placed the intervals, writing its bytes at its
// place. Each interval ends padded with 1 bits to a byte, fill bytes (0xFF,
// which may precede any marker) and its marker (RSTn, the last EOI), so
// that every interval's length is a whole number of words: an interval
// writes whole words, none shared.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Coefficients { uint coef[]; };
// Code and length (code | length << 16) of each symbol: luma's DC
// categories at 0, its AC symbols at 16; chroma's at 272 and 288.
layout(std430, binding = 1) readonly buffer Codes { uint codes[]; };
layout(std430, binding = 2) buffer Lengths { uint lengths[]; };
// jpeg_scan.comp's: the total, whether it fits, each interval's place.
layout(std430, binding = 3) readonly buffer Places { uint total; uint fits; uint pad0; uint pad1; uint places[]; };
layout(std430, binding = 4) writeonly buffer Bytes { uint words[]; };
layout(location = 0) uniform int mcus;
layout(location = 1) uniform int interval; // MCUs an interval
layout(location = 2) uniform int intervals;
layout(location = 3) uniform int writing;

uint bits = 0u;  // the bits not yet written, in the low `held`
int held = 0;
uint count = 0u; // bytes of the interval so far
uint word = 0u;  // the word being filled (writing)
uint base = 0u;  // the interval's first word (writing)

void put_byte(uint b)
{
    if (writing != 0) {
        word |= b << (8u * (count & 3u));
        if ((count & 3u) == 3u) {
            words[base + (count >> 2)] = word;
            word = 0u;
        }
    }
    count++;
}

// `size` bits (at most 16), the byte 0xFF followed by a stuffed 0.
void put_bits(uint code, int size)
{
    bits = (bits << size) | (code & ((1u << size) - 1u));
    held += size;
    while (held >= 8) {
        uint b = (bits >> (held - 8)) & 0xffu;
        put_byte(b);
        if (b == 0xffu)
            put_byte(0u);
        held -= 8;
    }
}

void put_code(uint c)
{
    put_bits(c & 0xffffu, int(c >> 16));
}

int coefficient(uint at, int k)
{
    uint w = coef[at + uint(k >> 1)];
    return (k & 1) != 0 ? int(w) >> 16 : int(w << 16) >> 16;
}

// One block of 64 coefficients from word `at`, with table `table` (0 luma, 272 chroma).
void block(uint at, uint table, inout int last_dc)
{
    int dc = coefficient(at, 0);
    int diff = dc - last_dc;
    last_dc = dc;
    int size = diff == 0 ? 0 : findMSB(abs(diff)) + 1;
    put_code(codes[table + uint(size)]);
    if (size > 0)
        put_bits(uint(diff < 0 ? diff - 1 : diff), size);
    int run = 0;
    for (int k = 1; k < 64; k++) {
        if ((k & 1) == 0 && k < 63 && coef[at + uint(k >> 1)] == 0u) {
            run += 2; // both halves of the word are zero
            k++;
            continue;
        }
        int v = coefficient(at, k);
        if (v == 0) {
            run++;
            continue;
        }
        while (run > 15) {
            put_code(codes[table + 16u + 0xf0u]); // ZRL: 16 zeros
            run -= 16;
        }
        size = findMSB(abs(v)) + 1;
        put_code(codes[table + 16u + uint(run << 4 | size)]);
        put_bits(uint(v < 0 ? v - 1 : v), size);
        run = 0;
    }
    if (run > 0)
        put_code(codes[table + 16u]); // EOB
}

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= intervals)
        return;
    if (writing != 0) {
        if (fits == 0u)
            return;
        base = places[i] >> 2;
    }
    int first = i * interval, end = min(first + interval, mcus);
    int dc_y = 0, dc_cb = 0, dc_cr = 0;
    for (int m = first; m < end; m++) {
        uint at = uint(m) * 192u;
        for (int b = 0; b < 4; b++)
            block(at + uint(b) * 32u, 0u, dc_y);
        block(at + 128u, 272u, dc_cb);
        block(at + 160u, 272u, dc_cr);
    }
    if (held > 0)
        put_bits(0x7fu, 8 - held); // 1 bits to the byte's end
    uint fill = (4u - ((count + 2u) & 3u)) & 3u;
    for (uint f = 0u; f < fill; f++)
        put_byte(0xffu);
    put_byte(0xffu);
    put_byte(i + 1 < intervals ? 0xd0u + uint(i & 7) : 0xd9u);
    if (writing == 0)
        lengths[i] = count;
}
