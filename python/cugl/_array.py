"""CUDA arrays: cuda.core's CUDAArray (OpaqueArray) over array.h."""
from ctypes import byref, c_size_t, c_void_p

from ._device import Device
from ._handle import Owned
from ._hostbuf import host_memory
from ._lib import load
from ._stream import stream_ptr
from ._structs import ArrayDesc

_NUMPY_KIND = {"u": "uint", "i": "int", "f": "float"}


def _formats():
    """{name: cugl_format} for every format libcugl lists (CUGL_FORMAT_LIST),
    by NumPy's name ("float32") and cugl's short one ("f32")."""
    lib = load()
    names = {}
    value = 1
    while True:
        short = lib.cugl_format_name(value).decode()
        if short == "invalid":
            return names
        names[short] = value
        names[_NUMPY_KIND[short[0]] + short[1:]] = value
        value += 1


def format_value(fmt):
    """The cugl_format of a format given by name, NumPy dtype or value."""
    if isinstance(fmt, int) and not isinstance(fmt, bool):
        return fmt
    formats = _formats()
    name = fmt if isinstance(fmt, str) else getattr(fmt, "name", None)
    if name is None:
        try:
            import numpy
            name = numpy.dtype(fmt).name
        except (ImportError, TypeError):
            name = None
    if name not in formats:
        raise ValueError("format %r is none of %s" % (
            fmt, ", ".join(n for n in formats if len(n) > 3)))
    return formats[name]


def _release_array(ptr):
    load().cugl_array_release(ptr)


class CUDAArray(Owned):
    """An opaque, hardware-laid-out image for textures and surfaces: no
    pointer, filled and read by copies. Shapes are (width[, height[,
    depth]]) in elements, x fastest."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("CUDAArray objects cannot be instantiated directly; use "
                           "CUDAArray.from_descriptor()")

    @classmethod
    def _wrap(cls, ptr):
        a = cls.__new__(cls)
        a._own(ptr, _release_array)
        return a

    @classmethod
    def from_descriptor(cls, *, shape, format, num_channels=1, is_surface_load_store=False,
                        layers=0, cubemap=False, device=None):
        """Allocate an array on `device` (None: the current one, else 0).

        format: "uint8", "uint16", "uint32", "int8", "int16", "int32",
        "float16" or "float32" (or a NumPy dtype of one); layers: a layered
        array of that many images; cubemap: 6 square faces (a layer).
        """
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        desc = ArrayDesc(ndim=len(shape), format=format_value(format),
                         num_channels=num_channels, surface_load_store=is_surface_load_store,
                         layers=layers, cubemap=cubemap)
        for i, extent in enumerate(shape[:3]):
            desc.shape[i] = extent
        lib = load()
        lib.cugl_array_desc_validate(byref(desc))  # cugl's own checks, before the device
        out = c_void_p()
        lib.cugl_array_create(byref(out), Device(device)._ptr, byref(desc))
        return cls._wrap(out.value)

    @property
    def handle(self):
        """The raw CUarray as an int; 0 after close."""
        return load().cugl_array_handle(self._ptr) or 0

    @property
    def device(self):
        return Device._from_ptr(load().cugl_array_device(self._ptr))

    @property
    def ndim(self):
        return load().cugl_array_ndim(self._ptr)

    @property
    def shape(self):
        """(width[, height[, depth]]) in elements."""
        out = (c_size_t * 3)()
        lib = load()
        lib.cugl_array_shape(self._ptr, out)
        return tuple(out[:lib.cugl_array_ndim(self._ptr)])

    @property
    def format(self):
        """The channel format's NumPy name, e.g. "float32"."""
        short = load().cugl_format_name(load().cugl_array_format(self._ptr)).decode()
        return _NUMPY_KIND[short[0]] + short[1:]

    @property
    def num_channels(self):
        return load().cugl_array_num_channels(self._ptr)

    @property
    def element_bytes(self):
        """Bytes an element: the format's size times the channels."""
        return load().cugl_array_element_size(self._ptr)

    element_size = element_bytes

    @property
    def size_bytes(self):
        """Bytes of the whole array, every layer and face included."""
        return load().cugl_array_size_bytes(self._ptr)

    @property
    def layers(self):
        return load().cugl_array_layers(self._ptr)

    @property
    def is_cubemap(self):
        return load().cugl_array_is_cubemap(self._ptr)

    @property
    def is_surface_load_store(self):
        return load().cugl_array_is_surface_load_store(self._ptr)

    @property
    def is_closed(self):
        return load().cugl_array_is_closed(self._ptr)

    def copy_from(self, src, *, stream):
        """Fill the whole array, on `stream`, from a Buffer or a C-contiguous
        host object (buffer protocol) of at least size_bytes bytes, packed.
        From host memory the call returns once the copy is done."""
        from ._memory import Buffer
        sptr, s = stream_ptr(stream)
        lib = load()
        if isinstance(src, Buffer):
            lib.cugl_array_copy_from_buffer(self._ptr, src._ptr, sptr)
            return
        with host_memory(src, False, "src") as (address, size):
            lib.cugl_array_copy_from_host(self._ptr, address, size, sptr)
            s.sync()

    def copy_to(self, dst, *, stream):
        """Copy the whole array, on `stream`, into a Buffer or a writable
        C-contiguous host object of at least size_bytes bytes; returns dst.
        Into host memory the call returns once the copy is done."""
        from ._memory import Buffer
        sptr, s = stream_ptr(stream)
        lib = load()
        if isinstance(dst, Buffer):
            lib.cugl_array_copy_to_buffer(dst._ptr, self._ptr, sptr)
            return dst
        with host_memory(dst, True, "dst") as (address, size):
            lib.cugl_array_copy_to_host(address, size, self._ptr, sptr)
            s.sync()
        return dst

    def close(self):
        """Free the array now (a mapped GL image unmaps); idempotent."""
        load().cugl_array_close(self._ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<CUDAArray shape=%s format=%s num_channels=%d%s>" % (
            self.shape, self.format, self.num_channels, " closed" if self.is_closed else "")
