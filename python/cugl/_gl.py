"""The few GL calls the viewer makes itself, loaded with cugl_app_gl_proc
(libcugl-app keeps its own loader private), and the GLSL of the one
program it adds to libcugl-app's: drawing an image of 1 or 3 channels
(uint8, float16 or float32) straight from a GL buffer, one channel through
the colour map.

Device memory of 1 or 3 channels has no target format of its own
(libcugl-app's images are RGBA8, RGBA16F, RGBA32F and R32F), so the viewer
copies it as it is into a buffer target (one copy, on the GPU) and this
program reads the buffer as a shader storage buffer and draws each pixel:

  texel (x, y) of the pixel at the viewport's (px, py): x = floor((px + 0.5)
  * W / viewport width), y likewise, row 0 at the bottom (as libcugl-app's
  blit draws images); element e = (y * W + x) * C + c of the buffer, read
  as the dtype stores it (bytes of uint8 little-endian in 32-bit words,
  halves two a word, floats one a word);
  3 channels: rgb = clamp((v - lo) * scale, 0, 1), alpha 1 (uint8: lo 0,
  scale 1/255, so each byte is drawn as itself; floats: lo 0, scale 1, as
  the blit clamps them);
  1 channel: t = clamp((v - lo) * scale, 0, 1) (NaN: 0), index
  int(t * 255 + 0.5), and the colour map's entry at that index (the same
  256 entries and the same float32 formula as colormap() applies in NumPy).

The framebuffer stores the result as RGBA8, rounding to the nearest level.
"""
import ctypes
from ctypes import c_char_p, c_float, c_int, c_uint, c_void_p

GL_FRAMEBUFFER = 0x8D40
GL_COLOR_BUFFER_BIT = 0x00004000
GL_DEPTH_BUFFER_BIT = 0x00000100
GL_SHADER_STORAGE_BUFFER = 0x90D2
GL_TRIANGLES = 0x0004
GL_DYNAMIC_STORAGE_BIT = 0x0100

# name: (restype, argtypes)
FUNCTIONS = {
    "glBindFramebuffer": (None, [c_uint, c_uint]),
    "glViewport": (None, [c_int, c_int, c_int, c_int]),
    "glClearColor": (None, [c_float, c_float, c_float, c_float]),
    "glClear": (None, [c_uint]),
    "glUseProgram": (None, [c_uint]),
    "glDeleteProgram": (None, [c_uint]),
    "glGetUniformLocation": (c_int, [c_uint, c_char_p]),
    "glUniform1i": (None, [c_int, c_int]),
    "glUniform2i": (None, [c_int, c_int, c_int]),
    "glUniform4i": (None, [c_int, c_int, c_int, c_int, c_int]),
    "glUniform1f": (None, [c_int, c_float]),
    "glBindBufferBase": (None, [c_uint, c_uint, c_uint]),
    "glCreateBuffers": (None, [c_int, ctypes.POINTER(c_uint)]),
    "glNamedBufferStorage": (None, [c_uint, ctypes.c_ssize_t, c_void_p, c_uint]),
    "glNamedBufferSubData": (None, [c_uint, ctypes.c_ssize_t, ctypes.c_ssize_t, c_void_p]),
    "glDeleteBuffers": (None, [c_int, ctypes.POINTER(c_uint)]),
    "glCreateVertexArrays": (None, [c_int, ctypes.POINTER(c_uint)]),
    "glBindVertexArray": (None, [c_uint]),
    "glDeleteVertexArrays": (None, [c_int, ctypes.POINTER(c_uint)]),
    "glDrawArrays": (None, [c_uint, c_int, c_int]),
}


class GL:
    """The functions of FUNCTIONS for the context current now (ctypes
    CFUNCTYPE: the GIL is released during each call)."""

    def __init__(self, app):
        for name, (restype, argtypes) in FUNCTIONS.items():
            address = app.cugl_app_gl_proc(name.encode())
            if not address:
                raise RuntimeError("GL has no %s (cugl_app_gl_proc gave NULL): the viewer "
                                   "needs GL 4.5" % name)
            setattr(self, name, ctypes.CFUNCTYPE(restype, *argtypes)(address))

    def buffer(self, data, size):
        """A GL buffer of `size` bytes, starting with `data` (bytes or None),
        that glNamedBufferSubData may rewrite."""
        name = c_uint()
        self.glCreateBuffers(1, ctypes.byref(name))
        self.glNamedBufferStorage(name, size, data, GL_DYNAMIC_STORAGE_BIT)
        return name.value

    def delete_buffer(self, name):
        self.glDeleteBuffers(1, ctypes.byref(c_uint(name)))

    def vertex_array(self):
        name = c_uint()
        self.glCreateVertexArrays(1, ctypes.byref(name))
        return name.value

    def delete_vertex_array(self, name):
        self.glDeleteVertexArrays(1, ctypes.byref(c_uint(name)))


# The dtype codes of the program's u_type.
TYPE_UINT8, TYPE_FLOAT16, TYPE_FLOAT32 = 0, 1, 2

VERTEX = b"""#version 450 core
// One triangle over the whole viewport.
void main()
{
    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
"""

FRAGMENT = b"""#version 450 core
layout(std430, binding = 0) readonly buffer Pixels { uint words[]; };
layout(std430, binding = 1) readonly buffer Colours { uint lut[256]; };
uniform ivec4 u_viewport; // x, y, width, height
uniform ivec2 u_size;     // the image's width and height
uniform int u_channels;   // 1 or 3
uniform int u_type;       // 0 uint8, 1 float16, 2 float32
uniform float u_lo, u_scale;
uniform int u_row0_up;    // 1: the image's row 0 at the top of the viewport
out vec4 colour;

float element(int e)
{
    if (u_type == 0)
        return float((words[e >> 2] >> (8 * (e & 3))) & 0xFFu);
    if (u_type == 1) {
        uint w = words[e >> 1];
        return unpackHalf2x16((e & 1) != 0 ? w >> 16 : w).x;
    }
    return uintBitsToFloat(words[e]);
}

void main()
{
    int x = int((gl_FragCoord.x - float(u_viewport.x)) * float(u_size.x) / float(u_viewport.z));
    int y = int((gl_FragCoord.y - float(u_viewport.y)) * float(u_size.y) / float(u_viewport.w));
    x = clamp(x, 0, u_size.x - 1);
    y = clamp(y, 0, u_size.y - 1);
    if (u_row0_up != 0)
        y = u_size.y - 1 - y;
    int e = (y * u_size.x + x) * u_channels;
    if (u_channels == 1) {
        float v = element(e);
        float t = isnan(v) ? 0.0 : clamp((v - u_lo) * u_scale, 0.0, 1.0);
        colour = unpackUnorm4x8(lut[int(t * 255.0 + 0.5)]);
    } else {
        vec3 c = vec3(element(e), element(e + 1), element(e + 2));
        colour = vec4(clamp((c - vec3(u_lo)) * u_scale, 0.0, 1.0), 1.0);
    }
}
"""

UNIFORMS = ("u_viewport", "u_size", "u_channels", "u_type", "u_lo", "u_scale", "u_row0_up")
