#version 450 core
// Baseline JPEG, entropy coding (jpeg_gl.c): one restart interval of
// INTERVAL MCUs a work group (DC predictions start again at each interval,
// so the intervals are independent), 64 invocations, one a coefficient of
// every block: each works out its coefficient's bits in each block (the DC
// difference from the block before of its component; an AC coefficient
// that is not zero, with the zero run before it, found from the DCT pass's
// mask; EOB), the places of all of them come from one scan of their
// lengths, and they are ORed into the interval's bits in shared memory, a
// window of 4,096 bits at a time. Shared memory is kept small: GL gives a
// work group at most 48 KB, and an SM runs as many groups at once as their
// shared memory allows. On an H100 this pass at 3840x2160 took 1.57 ms
// with 27 KB a group, 0.44 with 11 KB, 0.33 with 7 KB, 0.23 with 4 KB
// (the coefficients read from memory where they are needed, not copied
// into shared memory first). In each window 0xFF bytes get their stuffed 0 (a
// scan of each run's 0xFF count); the interval ends with 1 bits to the
// byte, fill bytes (0xFF, which may precede any marker) and its marker
// (RSTn, the last EOI), so that its length is a whole number of words.
// Written into the interval's slot of SLOT_WORDS (`placed` 0), its length
// to `lengths`; where some interval did not fit its slot, run again
// (`placed` 1, dispatched by jpeg_scan.comp) to write each at the place the
// scan of the lengths gave it.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Coefficients { uint coef[]; };
layout(std430, binding = 6) readonly buffer Masks { uint masks[]; };
// Code and length (code | length << 16) of each symbol: luma's DC
// categories at 0, its AC symbols at 16; chroma's at 272 and 288.
layout(std430, binding = 1) readonly buffer Codes { uint codes[]; };
layout(std430, binding = 2) buffer Lengths { uint lengths[]; };
// jpeg_scan.comp's: the total, whether it fits, each interval's place.
layout(std430, binding = 3) readonly buffer Places {
    uint total, fits, slotted, pad0;
    uint places[];
};
// The slots (`placed` 0), or the bytes in place (1).
layout(std430, binding = 4) buffer Bytes { uint words[]; };
layout(location = 0) uniform int mcus;
layout(location = 1) uniform int interval; // MCUs an interval, at most INTERVAL
layout(location = 2) uniform int intervals;
layout(location = 3) uniform int placed;

const int INTERVAL = 4;
const uint SLOT_WORDS = 256u; // jpeg_gl.c's SLOT_BYTES / 4
const uint WINDOW_WORDS = 128u, WINDOW_BITS = WINDOW_WORDS * 32u, WINDOW_BYTES = WINDOW_WORDS * 4u;

shared uint bits[WINDOW_WORDS]; // a window of the interval's bits, first bit the top of word 0
shared uint scan[64];
// Each coefficient's bits (block-major): length, then place; 16 bits each
// (an interval's blocks take at most 24 x 1,658 bits: under 65,536).
shared uint places_of[INTERVAL * 6 * 32];
int first_block;

uint t;

// The exclusive sum of `v` over the invocations before this one; `sum` the total.
uint scan_before(uint v, out uint sum)
{
    scan[t] = v;
    barrier();
    for (uint d = 1u; d < 64u; d <<= 1) {
        uint add = t >= d ? scan[t - d] : 0u;
        barrier();
        scan[t] += add;
        barrier();
    }
    sum = scan[63];
    uint before = scan[t] - v;
    barrier();
    return before;
}

// `length` bits of `value` (at most 16) at bit `at` of the interval: the
// part of them in the window that starts at bit `lo` (a word's first).
void put(uint value, uint length, uint at, uint lo)
{
    if (length == 0u || at + length <= lo || at >= lo + WINDOW_BITS)
        return;
    value &= (1u << length) - 1u;
    uint w = at >> 5, used = at & 31u, first = lo >> 5;
    if (used + length <= 32u) {
        atomicOr(bits[w - first], value << (32u - used - length));
    } else {
        uint rest = used + length - 32u;
        if (w >= first)
            atomicOr(bits[w - first], value >> rest);
        if (w + 1u < first + WINDOW_WORDS)
            atomicOr(bits[w + 1u - first], value << (32u - rest));
    }
}

// What coefficient t of the interval's block `b` adds: `zrl` runs of 16
// zeros (ZRL, `zrl_code`), a code `c` (code | length << 16), and `size`
// bits of `value`. Its length in bits.
uint piece(int b, out uint zrl_code, out uint zrl, out uint c, out uint value, out uint size)
{
    int kind = b % 6; // Y00 Y10 Y01 Y11 Cb Cr
    uint table = kind < 4 ? 0u : 272u;
    uint word = coef[uint(first_block + b) * 32u + (t >> 1)];
    int v = (t & 1u) != 0u ? int(word) >> 16 : int(word << 16) >> 16;
    zrl_code = codes[table + 16u + 0xf0u];
    zrl = 0u;
    c = 0u;
    size = 0u;
    value = uint(v < 0 ? v - 1 : v);
    if (t == 0u) {
        // The DC before: the same component's last block in the interval, or 0.
        int before = kind > 0 && kind < 4 ? b - 1 : kind == 0 ? b - 3 : b - 6;
        int last = before >= 0 ? int(coef[uint(first_block + before) * 32u] << 16) >> 16 : 0;
        int diff = v - last;
        size = diff == 0 ? 0u : uint(findMSB(abs(diff)) + 1);
        value = uint(diff < 0 ? diff - 1 : diff);
        c = codes[table + size];
    } else if (v != 0) {
        uint m = uint(first_block + b) * 2u;
        uvec2 mask = uvec2(masks[m], masks[m + 1u]);
        // The last coefficient before this one that is not zero (the DC's place if none).
        uvec2 below = t < 32u ? uvec2(mask.x & ((1u << t) - 1u) & ~1u, 0u)
                              : uvec2(mask.x & ~1u, mask.y & ((1u << (t - 32u)) - 1u));
        int prior = below.y != 0u ? 32 + findMSB(below.y) : below.x != 0u ? findMSB(below.x) : 0;
        uint run = t - uint(prior) - 1u;
        zrl = run >> 4;
        size = uint(findMSB(abs(v)) + 1);
        c = codes[table + 16u + ((run & 15u) << 4 | size)];
    } else if (t == 63u) {
        c = codes[table + 16u]; // EOB: the block ends in zeros
    }
    return zrl * (zrl_code >> 16) + (c >> 16) + size;
}

uint half_at(uint e)
{
    return (places_of[e >> 1] >> (16u * (e & 1u))) & 0xffffu;
}

// Byte j of the window.
uint byte_at(uint j)
{
    return (bits[j >> 2] >> (24u - 8u * (j & 3u))) & 0xffu;
}

void main()
{
    t = gl_LocalInvocationIndex;
    int i = int(gl_WorkGroupID.x);
    for (uint c = t; c < uint(INTERVAL * 6 * 32); c += 64u)
        places_of[c] = 0u;
    int first = i * interval, blocks = (min(first + interval, mcus) - first) * 6;
    first_block = first * 6;
    barrier();
    uint zrl_code, zrl, c, value, size;
    for (int b = 0; b < blocks; b++) {
        uint e = uint(b * 64) + t;
        atomicOr(places_of[e >> 1], piece(b, zrl_code, zrl, c, value, size) << (16u * (e & 1u)));
    }
    barrier();
    // The places: each invocation sums `blocks` lengths in a row (whole
    // words: `blocks` is even); the sums scanned.
    uint from = t * uint(blocks), sum = 0u;
    for (uint k = 0u; k < uint(blocks); k++)
        sum += half_at(from + k);
    uint at;
    uint place = scan_before(sum, at);
    for (uint k = 0u; k < uint(blocks); k += 2u) {
        uint first_length = half_at(from + k), second = half_at(from + k + 1u);
        places_of[(from + k) >> 1] = place | (place + first_length) << 16;
        place += first_length + second;
    }
    uint pad = (8u - (at & 7u)) & 7u; // 1 bits to the byte's end
    uint bytes = (at + pad) >> 3;
    // Where the bytes go, how many may, and those words zeroed first (at
    // most twice the bytes, and the end: fill and marker).
    uint base = placed != 0 ? places[i] >> 2 : uint(i) * SLOT_WORDS;
    uint limit = placed != 0 ? lengths[i] : SLOT_WORDS * 4u;
    for (uint w = t; w < min((2u * bytes + 8u) >> 2, limit >> 2); w += 64u)
        words[base + w] = 0u;
    memoryBarrierBuffer();
    barrier();
    uint ff_so_far = 0u;
    for (uint lo = 0u; lo < bytes; lo += WINDOW_BYTES) {
        for (uint w = t; w < WINDOW_WORDS; w += 64u)
            bits[w] = 0u;
        barrier();
        for (int b = 0; b < blocks; b++) {
            piece(b, zrl_code, zrl, c, value, size);
            place = half_at(uint(b * 64) + t);
            for (uint z = 0u; z < zrl; z++) {
                put(zrl_code & 0xffffu, zrl_code >> 16, place, lo * 8u);
                place += zrl_code >> 16;
            }
            put(c & 0xffffu, c >> 16, place, lo * 8u);
            put(value, size, place + (c >> 16), lo * 8u);
        }
        if (t == 0u)
            put((1u << pad) - 1u, pad, at, lo * 8u);
        barrier();
        // Each invocation a run of the window's bytes: its 0xFF count, scanned.
        uint n = min(WINDOW_BYTES, bytes - lo), run = (n + 63u) / 64u;
        uint j0 = min(t * run, n), j1 = min(j0 + run, n), ff = 0u, ff_window;
        for (uint j = j0; j < j1; j++)
            ff += byte_at(j) == 0xffu ? 1u : 0u;
        uint o = lo + j0 + ff_so_far + scan_before(ff, ff_window);
        for (uint j = j0; j < j1; j++) {
            uint b = byte_at(j);
            if (o < limit)
                atomicOr(words[base + (o >> 2)], b << (8u * (o & 3u)));
            o += b == 0xffu ? 2u : 1u; // a stuffed 0 after 0xFF
        }
        ff_so_far += ff_window;
        barrier(); // the window's bytes read before the next is made
    }
    uint stuffed = bytes + ff_so_far;
    uint fill = (4u - ((stuffed + 2u) & 3u)) & 3u;
    if (t == 0u) {
        for (uint f = 0u; f < fill + 1u; f++, stuffed++)
            if (stuffed < limit)
                atomicOr(words[base + (stuffed >> 2)], 0xffu << (8u * (stuffed & 3u)));
        uint marker = i + 1 < intervals ? 0xd0u + uint(i & 7) : 0xd9u;
        if (stuffed < limit)
            atomicOr(words[base + (stuffed >> 2)], marker << (8u * (stuffed & 3u)));
        if (placed == 0)
            lengths[i] = stuffed + 1u;
    }
}
