#version 450 core
// A volume's rays: one triangle over the viewport; each fragment finds its
// ray from the clip-space points at the near and far planes.
out vec2 ndc;

void main()
{
    vec2 c = vec2(gl_VertexID & 1, gl_VertexID >> 1) * 4.0 - 1.0;
    ndc = c;
    gl_Position = vec4(c, 0.0, 1.0);
}
