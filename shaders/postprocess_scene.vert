#version 450 core
// The postprocess demo's scene: one object at a time, placed by its model
// matrix (a rotation, a uniform scale and a translation).

layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec3 colour;

layout(location = 0) uniform mat4 model;
layout(location = 1) uniform mat4 view;
layout(location = 2) uniform mat4 proj;

out vec3 world_position;
out vec3 world_normal;
out vec3 vertex_colour;

void main()
{
    vec4 world = model * vec4(position, 1.0);
    world_position = world.xyz;
    world_normal = mat3(model) * normal;
    vertex_colour = colour;
    gl_Position = proj * view * world;
}
