#version 450 core
// Baseline JPEG, placing the intervals (jpeg_gl.c): each restart
// interval's place is the sum of the lengths before it (an exclusive scan
// in one work group: each invocation sums a run of lengths, the runs'
// sums are scanned in shared memory), the total after them, and whether
// the total fits the output.
layout(local_size_x = 1024) in;
layout(std430, binding = 2) readonly buffer Lengths { uint lengths[]; };
layout(std430, binding = 3) writeonly buffer Places { uint total; uint fits; uint pad0; uint pad1; uint places[]; };
layout(location = 2) uniform int intervals;
layout(location = 4) uniform uint capacity; // bytes

shared uint sums[1024];

void main()
{
    int t = int(gl_LocalInvocationIndex);
    int run = (intervals + 1023) / 1024;
    int first = t * run, end = min(first + run, intervals);
    uint sum = 0u;
    for (int i = first; i < end; i++)
        sum += lengths[i];
    sums[t] = sum;
    barrier();
    for (int d = 1; d < 1024; d *= 2) {
        uint add = t >= d ? sums[t - d] : 0u;
        barrier();
        sums[t] += add;
        barrier();
    }
    uint place = sums[t] - sum; // exclusive
    for (int i = first; i < end; i++) {
        places[i] = place;
        place += lengths[i];
    }
    if (t == 1023) {
        total = sums[1023];
        fits = sums[1023] <= capacity ? 1u : 0u;
    }
}
