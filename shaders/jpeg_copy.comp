#version 450 core
// Baseline JPEG, the bytes out (jpeg_gl.c): the entropy-coded data, a
// whole number of words, copied into the job's buffer in host memory by
// consecutive invocations (a write over the bus per 128 bytes, where the
// coding pass's scattered writes would each cross it), after a header of
// 16 words: the total in bytes, and whether it fit.
layout(local_size_x = 256) in;
layout(std430, binding = 3) readonly buffer Places { uint total; uint fits; uint pad0; uint pad1; uint places[]; };
layout(std430, binding = 4) readonly buffer Bytes { uint words[]; };
layout(std430, binding = 5) writeonly buffer Out { uint header[16]; uint out_words[]; };

void main()
{
    uint i = gl_GlobalInvocationID.x, stride = gl_NumWorkGroups.x * 256u;
    if (i == 0u) {
        header[0] = total;
        header[1] = fits;
    }
    if (fits == 0u)
        return;
    for (uint w = i; w < total >> 2; w += stride)
        out_words[w] = words[w];
}
