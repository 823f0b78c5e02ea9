#version 450 core
// Points from a buffer of positions (components floats each: x, y, z, and
// a w that is ignored), read as a storage buffer: no vertex format to set.
layout(std430, binding = 0) readonly buffer Positions { float p[]; };
layout(location = 0) uniform mat4 transform;
layout(location = 1) uniform int components;
layout(location = 2) uniform float size;

void main()
{
    int i = gl_VertexID * components;
    gl_Position = transform * vec4(p[i], p[i + 1], p[i + 2], 1.0);
    gl_PointSize = size;
}
