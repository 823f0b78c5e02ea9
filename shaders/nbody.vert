#version 450 core
// The nbody demo's bodies as point sprites. Two position buffers feed it:
// this frame's and the one before; their difference is the step's
// displacement, v dt, which sets the colour (nbody_math.h).

layout(location = 0) in vec4 body;     // x, y, z, mass: this frame
layout(location = 1) in vec4 previous; // the frame before

layout(location = 0) uniform mat4 view;
layout(location = 1) uniform mat4 proj;
layout(location = 2) uniform float sprite_pixels; // a sprite's diameter in pixels at distance 1
layout(location = 3) uniform float speed_scale;   // 1 / (dt * the speed shown brightest)

out vec3 tint;
out float brightness;

// Slow bodies (the outer discs) blue, fast ones (the cores) gold.
vec3 palette(float t)
{
    vec3 slow = vec3(0.25, 0.45, 1.0), middle = vec3(0.85, 0.8, 1.0), fast = vec3(1.0, 0.62, 0.22);
    return t < 0.5 ? mix(slow, middle, t * 2.0) : mix(middle, fast, t * 2.0 - 1.0);
}

void main()
{
    vec4 eye = view * vec4(body.xyz, 1.0);
    gl_Position = proj * eye;
    float speed = length(body.xyz - previous.xyz) * speed_scale;
    tint = palette(clamp(speed, 0.0, 1.0));
    // A sprite shrinks with distance down to 2 pixels; below that it fades
    // instead, keeping the light it adds proportional to its area.
    float size = sprite_pixels / max(-eye.z, 1e-3);
    float drawn = clamp(size, 2.0, 64.0);
    gl_PointSize = drawn;
    brightness = min(size * size / (drawn * drawn), 1.0);
}
