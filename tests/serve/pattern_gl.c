/*
 * pattern_gl.c - pattern.h's picture on the GPU (pattern_gl.h).
 */
#include "pattern_gl.h"

#include <stdint.h>

#include <cugl/app.h>

#include "pattern.h"

/* pattern.h's picture, drawn by the GPU: pattern_row's arithmetic, exact
 * in 32-bit ints (halves rounded toward zero, as C divides), each texel
 * (x, y) of GL's rows, bottom first, row h - 1 - y of the pattern's. (On
 * the CPU, with an upload from client memory, a 1920x1080 frame took more
 * than a frame's time on some machines: the program drew 46 to 55 frames
 * a second, and the link benchmark measured it, not the server.) */
static const char pattern_shader[] =
    "#version 450 core\n"
    "layout(local_size_x = 16, local_size_y = 16) in;\n"
    "layout(rgba8, binding = 0) writeonly uniform image2D picture;\n"
    "layout(std430, binding = 0) readonly buffer Wave { int wave[]; };\n"
    "layout(location = 0) uniform ivec2 size;\n"
    "layout(location = 1) uniform int t;\n"
    "int half_of(int v) { return v >= 0 ? v >> 1 : -((-v) >> 1); }\n"
    "void main()\n"
    "{\n"
    "    ivec2 p = ivec2(gl_GlobalInvocationID.xy);\n"
    "    if (p.x >= size.x || p.y >= size.y)\n"
    "        return;\n"
    "    int x = p.x, y = size.y - 1 - p.y;\n"
    "    int a = wave[(x * 3 + y + 5 * t) & 1023], b = wave[(y * 4 - x + 7 * t) & 1023];\n"
    "    int c = wave[((x * x + y * y) / 64 + 3 * t) & 1023];\n"
    "    uint gx = uint(x + 2 * t), gy = uint(y + t);\n"
    "    uint n = gx * 73856093u ^ gy * 19349663u;\n"
    "    n = (n ^ (n >> 13)) * 0x5bd1e995u;\n"
    "    int grain = int((n >> 24) % 26u) - 13;\n"
    "    ivec3 rgb = ivec3(128 + a + grain, 128 + half_of(b) + half_of(c) + grain,\n"
    "                      128 + c - half_of(a) + grain);\n"
    "    imageStore(picture, p, vec4(vec3(clamp(rgb, 0, 255)) / 255.0, 1.0));\n"
    "}\n";

/* The GL objects, of the context current at the first call. */
static GLuint program, wave, tex, read_fbo;
static int tw, th;

void pattern_gl_forget(void)
{
    program = wave = tex = read_fbo = 0;
    tw = th = 0;
}

bool draw_pattern(GLuint fbo, int w, int h, long frame)
{
    if (!program) {
        if (cugl_app_compute_program(&program, "pattern", pattern_shader) != CUGL_OK)
            return false;
        int32_t words[1024];
        const int16_t *table = pattern_wave();
        for (int i = 0; i < 1024; i++)
            words[i] = table[i];
        glCreateBuffers(1, &wave);
        glNamedBufferStorage(wave, sizeof words, words, 0);
    }
    if (tw != w || th != h) {
        if (tex) {
            glDeleteTextures(1, &tex);
            glDeleteFramebuffers(1, &read_fbo);
        }
        glCreateTextures(GL_TEXTURE_2D, 1, &tex);
        glTextureStorage2D(tex, 1, GL_RGBA8, w, h);
        glCreateFramebuffers(1, &read_fbo);
        glNamedFramebufferTexture(read_fbo, GL_COLOR_ATTACHMENT0, tex, 0);
        tw = w;
        th = h;
    }
    glUseProgram(program);
    glBindImageTexture(0, tex, 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_RGBA8);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, wave);
    glUniform2i(0, w, h);
    glUniform1i(1, (int)(frame % 1024));
    glDispatchCompute(((GLuint)w + 15) / 16, ((GLuint)h + 15) / 16, 1);
    glMemoryBarrier(GL_FRAMEBUFFER_BARRIER_BIT);
    glUseProgram(0);
    glBlitNamedFramebuffer(read_fbo, fbo, 0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    return true;
}
