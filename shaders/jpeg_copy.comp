#version 450 core
// Baseline JPEG, the bytes out (jpeg_gl.c): into the job's buffer in host
// memory, after a header of 16 words (the total in bytes, whether it fit,
// whether it came from the slots; words 4 to 7 take the encode's start and
// end times, which jpeg_gl.c has GL write there). A work group an
// interval: its words from its slot to its place; or, where the intervals
// were written in place (one did not fit its slot), the whole in a row.
// Consecutive invocations write consecutive words: a write over the bus per
// 128 bytes.
layout(local_size_x = 64) in;
layout(std430, binding = 2) readonly buffer Lengths { uint lengths[]; };
layout(std430, binding = 3) readonly buffer Places {
    uint total, fits, slotted, pad0;
    uint places[];
};
layout(std430, binding = 4) readonly buffer Slots { uint slots[]; };
layout(std430, binding = 5) writeonly buffer Out { uint header[16]; uint out_words[]; };
layout(std430, binding = 6) readonly buffer Bytes { uint words[]; };

const uint SLOT_WORDS = 256u; // jpeg_gl.c's SLOT_BYTES / 4

void main()
{
    uint i = gl_WorkGroupID.x, t = gl_LocalInvocationIndex;
    if (i == 0u && t == 0u) {
        header[0] = total;
        header[1] = fits;
        header[2] = slotted;
    }
    if (fits == 0u)
        return;
    if (slotted != 0u) {
        uint from = i * SLOT_WORDS, to = places[i] >> 2;
        for (uint w = t; w < lengths[i] >> 2; w += 64u)
            out_words[to + w] = slots[from + w];
    } else {
        for (uint w = i * 64u + t; w < total >> 2; w += gl_NumWorkGroups.x * 64u)
            out_words[w] = words[w];
    }
}
