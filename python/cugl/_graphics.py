"""GL buffers and images registered with CUDA: cuda.core's GraphicsResource
over graphics.h, with images mapped to CUDA arrays.

The GL context that owns the object must be current on the calling thread
for registration, map, unmap and close (the driver's rule); prefer `with`
blocks, so that nothing is left for the garbage collector to unregister
at a moment when no context is current.
"""
from ctypes import byref, c_void_p

from ._array import CUDAArray
from ._device import Device
from ._handle import Owned
from ._lib import load
from ._memory import Buffer
from ._stream import stream_ptr

# cugl_graphics_flags (graphics.h)
FLAGS = {"none": 0, "read_only": 1, "write_discard": 2, "surface_load_store": 4,
         "texture_gather": 8}

# The GL targets an image can be registered with (GL's own values).
GL_TEXTURE_2D = 0x0DE1
GL_TEXTURE_3D = 0x806F
GL_TEXTURE_RECTANGLE = 0x84F5
GL_TEXTURE_CUBE_MAP = 0x8513
GL_TEXTURE_2D_ARRAY = 0x8C1A
GL_RENDERBUFFER = 0x8D41


def _flags(flags):
    if flags is None:
        return 0
    names = (flags,) if isinstance(flags, str) else tuple(flags)
    value = 0
    for name in names:
        if name not in FLAGS:
            raise ValueError("Unknown register flag %r. Valid flags: %s"
                             % (name, ", ".join(FLAGS)))
        value |= FLAGS[name]
    return value


def _release_resource(ptr):
    load().cugl_graphics_resource_release(ptr)


class GraphicsResource(Owned):
    """A GL buffer or image registered with CUDA.

    map() gives a buffer resource's memory as a Buffer, map_array() an
    image's layer and level as a CUDAArray; either owns the mapping, and
    closing it (leaving its `with` block) unmaps. close() unregisters,
    unmapping first.
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError("GraphicsResource objects cannot be instantiated directly. Use "
                           "GraphicsResource.from_gl_buffer() or "
                           "GraphicsResource.from_gl_image().")

    @classmethod
    def _wrap(cls, ptr, stream=None):
        r = cls.__new__(cls)
        r._own(ptr, _release_resource)
        r._enter_stream = stream
        r._entered = None
        return r

    @classmethod
    def from_gl_buffer(cls, gl_buffer, *, flags=None, stream=None, device=None):
        """Register GL buffer object `gl_buffer` for `device` (None: the
        current device, else 0). With `stream`, `with` maps it on entry and
        gives the Buffer; without, `with` gives the resource. Either way the
        resource is closed on exit."""
        out = c_void_p()
        load().cugl_graphics_resource_from_gl_buffer(byref(out), Device(device)._ptr,
                                                     gl_buffer, _flags(flags))
        return cls._wrap(out.value, stream)

    @classmethod
    def from_gl_image(cls, image, target, *, flags=None, device=None):
        """Register a GL texture or renderbuffer `image` of `target`
        (GL_TEXTURE_2D, ...; see cugl/graphics.h for the formats)."""
        out = c_void_p()
        load().cugl_graphics_resource_from_gl_image(byref(out), Device(device)._ptr, image,
                                                    target, _flags(flags))
        return cls._wrap(out.value)

    def map(self, *, stream):
        """Map a buffer resource on `stream`: a Buffer that owns the mapping."""
        sptr, s = stream_ptr(stream)
        out = c_void_p()
        load().cugl_graphics_resource_map(byref(out), self._ptr, sptr)
        return Buffer._wrap(out.value, stream=s)

    def map_array(self, *, stream, layer=0, level=0):
        """Map an image resource on `stream`: one layer (or cube face) and mip
        level as a CUDAArray that owns the mapping."""
        sptr, _ = stream_ptr(stream)
        out = c_void_p()
        load().cugl_graphics_resource_map_array(byref(out), self._ptr, sptr, layer, level)
        return CUDAArray._wrap(out.value)

    def unmap(self, *, stream=None):
        """Unmap, on `stream` (None: the mapping stream); what map gave is closed."""
        sptr, _ = stream_ptr(stream)
        load().cugl_graphics_resource_unmap(self._ptr, sptr)

    @property
    def map_flags(self):
        """The access hint for the next maps: "none", "read_only" or "write_discard"."""
        value = load().cugl_graphics_resource_map_flags(self._ptr)
        return next(name for name, v in FLAGS.items() if v == value)

    @map_flags.setter
    def map_flags(self, flags):
        load().cugl_graphics_resource_set_map_flags(self._ptr, _flags(flags))

    def close(self, stream=None):
        """Unregister (unmapping first, on `stream`); idempotent."""
        sptr, _ = stream_ptr(stream)
        load().cugl_graphics_resource_close(self._ptr, sptr)

    @property
    def is_mapped(self):
        return load().cugl_graphics_resource_is_mapped(self._ptr)

    @property
    def is_closed(self):
        return load().cugl_graphics_resource_is_closed(self._ptr)

    @property
    def is_buffer(self):
        return load().cugl_graphics_resource_is_buffer(self._ptr)

    @property
    def flags(self):
        """The registration flags (an int of CUGL_GRAPHICS_* bits)."""
        return load().cugl_graphics_resource_flags(self._ptr)

    @property
    def gl_name(self):
        return load().cugl_graphics_resource_gl_name(self._ptr)

    @property
    def gl_target(self):
        """The image's target; 0 for buffers."""
        return load().cugl_graphics_resource_gl_target(self._ptr)

    @property
    def handle(self):
        """The raw CUgraphicsResource as an int; 0 after close."""
        return load().cugl_graphics_resource_handle(self._ptr) or 0

    resource_handle = handle

    @property
    def device(self):
        return Device._from_ptr(load().cugl_graphics_resource_device(self._ptr))

    def __enter__(self):
        if self._enter_stream is not None:
            self._entered = self.map(stream=self._enter_stream)
            return self._entered
        return self

    def __exit__(self, *exc):
        self._entered = None
        self.close()

    def __repr__(self):
        return "<GraphicsResource handle=0x%x%s%s>" % (
            self.handle, " mapped" if self.is_mapped else "", " closed" if self.is_closed else "")
