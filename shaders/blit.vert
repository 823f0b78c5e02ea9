#version 450 core
// A triangle that covers the viewport, made from gl_VertexID alone (no
// vertex buffer): (-1,-1), (3,-1), (-1,3). uv is 0..1 over the viewport,
// v up from the bottom, or down from the top where row0_up is 1 (row 0 of
// the picture at the top: cugl_app_target_draw_origin's
// CUGL_APP_ORIGIN_UPPER).
layout(location = 0) out vec2 uv;
layout(location = 4) uniform int row0_up;

void main()
{
    vec2 p = vec2((gl_VertexID & 1) * 4 - 1, (gl_VertexID >> 1) * 4 - 1);
    uv = p * 0.5 + 0.5;
    if (row0_up != 0)
        uv.y = 1.0 - uv.y;
    gl_Position = vec4(p, 0.0, 1.0);
}
