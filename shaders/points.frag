#version 450 core
// One colour for every point.
layout(location = 3) uniform vec4 colour;
layout(location = 0) out vec4 rgba;

void main()
{
    rgba = colour;
}
