#version 450 core
// The texture over the viewport; texel row 0 at the bottom, as GL has it.
layout(binding = 0) uniform sampler2D image;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main()
{
    color = texture(image, uv);
}
