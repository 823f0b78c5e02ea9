#version 450 core
// Baseline JPEG, placing the intervals (jpeg_gl.c): each restart
// interval's place is the sum of the lengths before it (an exclusive scan
// in one work group: each invocation sums a run of lengths, the runs'
// sums are scanned in shared memory), the total after them, whether the
// total fits the output, and whether every interval fit its slot; where
// one did not (and the total fits), the work groups of the coding pass
// that writes each interval at its place (an indirect dispatch), else none.
layout(local_size_x = 1024) in;
layout(std430, binding = 2) readonly buffer Lengths { uint lengths[]; };
layout(std430, binding = 3) writeonly buffer Places {
    uint total, fits, slotted, pad0;
    uint places[];
};
layout(std430, binding = 7) writeonly buffer Dispatch { uint groups[3]; };
layout(location = 2) uniform int intervals;
layout(location = 4) uniform uint capacity;   // bytes
layout(location = 5) uniform uint slot_bytes;

shared uint sums[1024];
shared uint over;

void main()
{
    int t = int(gl_LocalInvocationIndex);
    if (t == 0)
        over = 0u;
    int run = (intervals + 1023) / 1024;
    int first = t * run, end = min(first + run, intervals);
    uint sum = 0u, longest = 0u;
    for (int i = first; i < end; i++) {
        sum += lengths[i];
        longest = max(longest, lengths[i]);
    }
    sums[t] = sum;
    barrier();
    if (longest > slot_bytes)
        atomicOr(over, 1u);
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
        bool fit = sums[1023] <= capacity;
        total = sums[1023];
        fits = fit ? 1u : 0u;
        slotted = over == 0u ? 1u : 0u;
        groups[0] = fit && over != 0u ? uint(intervals) : 0u;
        groups[1] = 1u;
        groups[2] = 1u;
    }
}
