#version 450 core
// A triangle mesh from buffers CUDA writes, read as storage buffers (no
// vertex format to set): positions (components floats a vertex), one
// scalar a vertex where there are scalars. Indices, where there are, are
// the draw's element buffer (gl_VertexID is the index, and a vertex
// shared by triangles is transformed once). A vertex past the mesh's
// takes a NaN position, which clips its whole primitive away (as Mesa's
// llvmpipe does; gl-draw checks it), and marks the primitive for the
// fragment shader to drop where a GL rasterizes it anyway (everywhere but
// at the good vertices' own points).
layout(std430, binding = 0) readonly buffer Positions { float p[]; };
layout(std430, binding = 1) readonly buffer Scalars { float s[]; };
layout(location = 0) uniform mat4 transform;
layout(location = 1) uniform int components;
layout(location = 2) uniform float point_size;
layout(location = 3) uniform bool scalared;
layout(location = 4) uniform uint vertices;

out float value;
out float outside;
// Screen-linear, for the face's normal in the fragment shader.
noperspective out vec3 ndc;

void main()
{
    uint v = uint(gl_VertexID);
    outside = v < vertices ? 0.0 : 1e30;
    v = min(v, vertices - 1u);
    uint i = v * uint(components);
    gl_Position = transform * vec4(p[i], p[i + 1u], p[i + 2u], 1.0);
    if (outside > 0.0)
        gl_Position = vec4(uintBitsToFloat(0x7fc00000u));
    ndc = gl_Position.xyz / gl_Position.w;
    gl_PointSize = point_size;
    value = scalared ? s[v] : 0.0;
}
