"""A headless GL 4.5 core context on the EGL device that runs a CUDA device,
with ctypes alone, for the GraphicsResource tests (the package's live part
will bring libcugl-app's contexts; until then the tests make their own).
"""
import ctypes
from ctypes import POINTER, byref, c_char_p, c_int, c_int32, c_ssize_t, c_uint, c_void_p

EGL_NONE = 0x3038
EGL_EXTENSIONS = 0x3055
EGL_CUDA_DEVICE_NV = 0x323A
EGL_PLATFORM_DEVICE_EXT = 0x313F
EGL_OPENGL_API = 0x30A2
EGL_RENDERABLE_TYPE = 0x3040
EGL_OPENGL_BIT = 0x0008
EGL_SURFACE_TYPE = 0x3033
EGL_PBUFFER_BIT = 0x0001
EGL_WIDTH, EGL_HEIGHT = 0x3057, 0x3056
EGL_CONTEXT_MAJOR_VERSION = 0x3098
EGL_CONTEXT_MINOR_VERSION = 0x30FB
EGL_CONTEXT_OPENGL_PROFILE_MASK = 0x30FD
EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT = 0x1

GL_RGBA = 0x1908
GL_FLOAT = 0x1406
GL_RGBA32F = 0x8814
GL_TEXTURE_2D = 0x0DE1
GL_DYNAMIC_STORAGE_BIT = 0x0100


class NoContext(Exception):
    """No EGL device runs the CUDA device (the reason is the message)."""


def _attribs(*pairs):
    flat = [x for pair in pairs for x in pair] + [EGL_NONE]
    return (c_int32 * len(flat))(*flat)


class GLContext:
    """Current on the creating thread until close()."""

    GL_FUNCTIONS = {
        "glCreateBuffers": (None, [c_int, POINTER(c_uint)]),
        "glNamedBufferStorage": (None, [c_uint, c_ssize_t, c_void_p, c_uint]),
        "glGetNamedBufferSubData": (None, [c_uint, c_ssize_t, c_ssize_t, c_void_p]),
        "glNamedBufferSubData": (None, [c_uint, c_ssize_t, c_ssize_t, c_void_p]),
        "glDeleteBuffers": (None, [c_int, POINTER(c_uint)]),
        "glCreateTextures": (None, [c_uint, c_int, POINTER(c_uint)]),
        "glTextureStorage2D": (None, [c_uint, c_int, c_uint, c_int, c_int]),
        "glTextureSubImage2D": (None, [c_uint, c_int, c_int, c_int, c_int, c_int, c_uint,
                                       c_uint, c_void_p]),
        "glGetTextureImage": (None, [c_uint, c_int, c_uint, c_uint, c_int, c_void_p]),
        "glDeleteTextures": (None, [c_int, POINTER(c_uint)]),
        "glFinish": (None, []),
        "glGetError": (c_uint, []),
    }

    def __init__(self, cuda_ordinal):
        try:
            egl = ctypes.CDLL("libEGL.so.1")
        except OSError as e:
            raise NoContext("no EGL library: %s" % e)
        self.egl = egl
        egl.eglGetProcAddress.restype = c_void_p
        egl.eglGetProcAddress.argtypes = [c_char_p]

        def ext(name, restype, argtypes):
            address = egl.eglGetProcAddress(name.encode())
            if not address:
                raise NoContext("EGL lacks %s (EGL_EXT_platform_device)" % name)
            return ctypes.CFUNCTYPE(restype, *argtypes)(address)

        query_devices = ext("eglQueryDevicesEXT", c_uint, [c_int, POINTER(c_void_p),
                                                           POINTER(c_int)])
        query_string = ext("eglQueryDeviceStringEXT", c_char_p, [c_void_p, c_int])
        query_attrib = ext("eglQueryDeviceAttribEXT", c_uint, [c_void_p, c_int,
                                                               POINTER(ctypes.c_ssize_t)])
        platform_display = ext("eglGetPlatformDisplayEXT", c_void_p, [c_int, c_void_p,
                                                                      c_void_p])
        devices = (c_void_p * 16)()
        n = c_int()
        if not query_devices(16, devices, byref(n)):
            raise NoContext("eglQueryDevicesEXT failed")
        device = None
        for i in range(n.value):
            extensions = (query_string(devices[i], EGL_EXTENSIONS) or b"").split()
            value = ctypes.c_ssize_t(-1)
            if (b"EGL_NV_device_cuda" in extensions and
                    query_attrib(devices[i], EGL_CUDA_DEVICE_NV, byref(value)) and
                    value.value == cuda_ordinal):
                device = devices[i]
                break
        if device is None:
            raise NoContext("no EGL device runs CUDA device %d (%d EGL device(s); is NVIDIA's "
                            "EGL installed?)" % (cuda_ordinal, n.value))
        egl.eglInitialize.argtypes = [c_void_p, POINTER(c_int), POINTER(c_int)]
        egl.eglBindAPI.argtypes = [c_uint]
        egl.eglChooseConfig.argtypes = [c_void_p, POINTER(c_int32), POINTER(c_void_p), c_int,
                                        POINTER(c_int)]
        egl.eglCreateContext.restype = c_void_p
        egl.eglCreateContext.argtypes = [c_void_p, c_void_p, c_void_p, POINTER(c_int32)]
        egl.eglCreatePbufferSurface.restype = c_void_p
        egl.eglCreatePbufferSurface.argtypes = [c_void_p, c_void_p, POINTER(c_int32)]
        egl.eglMakeCurrent.argtypes = [c_void_p, c_void_p, c_void_p, c_void_p]
        egl.eglDestroyContext.argtypes = [c_void_p, c_void_p]
        egl.eglDestroySurface.argtypes = [c_void_p, c_void_p]
        egl.eglGetError.restype = c_int
        display = platform_display(EGL_PLATFORM_DEVICE_EXT, device, None)
        major, minor = c_int(), c_int()
        if not display or not egl.eglInitialize(display, byref(major), byref(minor)):
            raise NoContext("the EGL device of CUDA device %d does not initialise (0x%x)"
                            % (cuda_ordinal, egl.eglGetError()))
        if not egl.eglBindAPI(EGL_OPENGL_API):
            raise NoContext("no desktop GL on the EGL device")
        config, count = c_void_p(), c_int()
        surface = None
        for surface_type in (0, EGL_PBUFFER_BIT):
            attrs = _attribs((EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT),
                             (EGL_SURFACE_TYPE, surface_type))
            if egl.eglChooseConfig(display, attrs, byref(config), 1, byref(count)) and count.value:
                if surface_type:
                    surface = egl.eglCreatePbufferSurface(
                        display, config, _attribs((EGL_WIDTH, 1), (EGL_HEIGHT, 1)))
                break
        else:
            raise NoContext("no GL config on the EGL device (0x%x)" % egl.eglGetError())
        context = egl.eglCreateContext(
            display, config, None,
            _attribs((EGL_CONTEXT_MAJOR_VERSION, 4), (EGL_CONTEXT_MINOR_VERSION, 5),
                     (EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT)))
        if not context:
            raise NoContext("no GL 4.5 core context (0x%x)" % egl.eglGetError())
        if not egl.eglMakeCurrent(display, surface, surface, context):
            raise NoContext("eglMakeCurrent failed (0x%x)" % egl.eglGetError())
        self.display, self.surface, self.context = display, surface, context
        for name, (restype, argtypes) in self.GL_FUNCTIONS.items():
            address = egl.eglGetProcAddress(name.encode())
            if not address:
                raise NoContext("GL lacks %s" % name)
            setattr(self, name, ctypes.CFUNCTYPE(restype, *argtypes)(address))

    def check(self):
        err = self.glGetError()
        assert err == 0, "GL error 0x%x" % err

    def buffer(self, nbytes):
        name = c_uint()
        self.glCreateBuffers(1, byref(name))
        self.glNamedBufferStorage(name, nbytes, None, GL_DYNAMIC_STORAGE_BIT)
        self.check()
        return name.value

    def read_buffer(self, name, out):
        self.glGetNamedBufferSubData(name, 0, out.nbytes, out.ctypes.data)
        self.check()
        return out

    def texture_rgba32f(self, width, height):
        name = c_uint()
        self.glCreateTextures(GL_TEXTURE_2D, 1, byref(name))
        self.glTextureStorage2D(name, 1, GL_RGBA32F, width, height)
        self.check()
        return name.value

    def read_texture(self, name, out):
        self.glGetTextureImage(name, 0, GL_RGBA, GL_FLOAT, out.nbytes, out.ctypes.data)
        self.check()
        return out

    def delete(self, buffers=(), textures=()):
        for names, fn in ((buffers, self.glDeleteBuffers), (textures, self.glDeleteTextures)):
            for n in names:
                fn(1, byref(c_uint(n)))

    def close(self):
        egl = self.egl
        egl.eglMakeCurrent(self.display, None, None, None)
        egl.eglDestroyContext(self.display, self.context)
        if self.surface:
            egl.eglDestroySurface(self.display, self.surface)
