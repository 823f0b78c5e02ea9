#version 450 core
// A triangle that covers the viewport, made from gl_VertexID alone (no
// vertex buffer): (-1,-1), (3,-1), (-1,3). uv is 0..1 over the viewport.
layout(location = 0) out vec2 uv;

void main()
{
    vec2 p = vec2((gl_VertexID & 1) * 4 - 1, (gl_VertexID >> 1) * 4 - 1);
    uv = p * 0.5 + 0.5;
    gl_Position = vec4(p, 0.0, 1.0);
}
