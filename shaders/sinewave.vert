#version 450 core
// The sinewave surface: positions and normals as CUDA wrote them.

layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;

layout(location = 0) uniform mat4 view;
layout(location = 1) uniform mat4 proj;

out vec3 world_position;
out vec3 world_normal;

void main()
{
    world_position = position;
    world_normal = normal;
    gl_Position = proj * view * vec4(position, 1.0);
}
