"""Importing a tensor: the one place where an object that describes memory
(DLPack's __dlpack__, the CUDA array interface, NumPy's array interface)
becomes a cugl view. StridedMemoryView's constructors, cugl.from_dlpack,
Buffer.from_handle(owner=...) and Viewer.show() all go through here
(_interop is the export side).

libcugl takes the memory over (cugl_view_from_dlpack[_versioned]): a
producer's DLPack tensor as it is, memory described by an array interface
as a DLPack 1.x tensor made here that holds the describing object
(_dlpack.owned_tensor). Device memory is ordered before its consumer's
stream: DLPack's producer is told the stream, the CUDA array interface's
`stream` is waited for on it.
"""
import sys
from ctypes import byref, c_void_p

from . import _dlpack as dl
from . import _dtypes
from . import _interop
from ._device import Device
from ._lib import load
from ._stream import as_stream
from ._structs import DLPackImportDesc

# The protocols import_tensor reads: ANY tries them in this order.
ANY = "any"
DLPACK = "__dlpack__"
CUDA_ARRAY_INTERFACE = "__cuda_array_interface__"
ARRAY_INTERFACE = "__array_interface__"

# Array-interface type kinds (typestr's second character) -> DLPack code.
_KINDS = {"b": dl.BOOL, "i": dl.INT, "u": dl.UINT, "f": dl.FLOAT, "c": dl.COMPLEX}


class Tensor:
    """What import_tensor made of an object.

    view: the StridedMemoryView of its memory;
    owned: True where the view was made here (the caller's to close), False
        where the object was a view already (the view is the object);
    stream: the consumer stream the memory was ordered before (a Stream),
        None where the caller orders the work or the memory is the host's;
    dtype, name, shape, device_id: the view's (code, bits, lanes), its name
        ("float32"), shape and device ordinal (-1: host memory only), read
        from libcugl at their first use.
    """

    __slots__ = ("obj", "view", "owned", "stream", "_dtype", "_shape", "_device_id")

    def __init__(self, obj, view, owned, stream):
        self.obj, self.view, self.owned, self.stream = obj, view, owned, stream
        self._dtype = self._shape = self._device_id = None

    @property
    def dtype(self):
        if self._dtype is None:
            self._dtype = self.view.dlpack_dtype
        return self._dtype

    @property
    def name(self):
        return _dtypes.name(self.dtype)

    @property
    def shape(self):
        if self._shape is None:
            self._shape = self.view.shape
        return self._shape

    @property
    def device_id(self):
        if self._device_id is None:
            self._device_id = self.view.device_id
        return self._device_id

    def numpy(self):
        """Host memory as a NumPy array: the object itself where it is one,
        else through its array interface, else through DLPack from the view."""
        import numpy as np
        if isinstance(self.obj, np.ndarray):
            return self.obj
        if hasattr(self.obj, "__array_interface__"):
            return np.asarray(self.obj)
        return np.from_dlpack(self.view)

    def close(self):
        """Close the view where it was made here."""
        if self.owned and not self.view.is_closed:
            self.view.close()


def import_tensor(obj, stream=None, protocol=ANY, cls=None):
    """The Tensor of `obj` through `protocol`: ANY tries DLPack first (and
    the array interface where DLPack refuses a host array, as NumPy 1.x
    does read-only ones), then the CUDA array interface, then the NumPy
    array interface; a StridedMemoryView is taken as it is.

    stream: the stream that will use the data (a Stream or an object with
    __cuda_stream__); None: the device's default stream; -1: no ordering
    (the caller's affair). Host memory needs none. cls: the class of the
    view made (a StridedMemoryView subclass; None: StridedMemoryView).
    """
    from ._view import StridedMemoryView
    cls = cls or StridedMemoryView
    if protocol == ANY:
        if isinstance(obj, StridedMemoryView):
            return Tensor(obj, obj, False, obj.stream)
        if hasattr(obj, "__dlpack__"):
            try:
                return _from_dlpack(cls, obj, stream)
            except BufferError:
                if not hasattr(obj, "__array_interface__"):
                    raise
                return _from_array_interface(cls, obj)
        if hasattr(obj, "__cuda_array_interface__"):
            return _from_cuda_array_interface(cls, obj, stream)
        if hasattr(obj, "__array_interface__"):
            return _from_array_interface(cls, obj)
        raise BufferError("the input object does not support any data exchange protocol "
                          "(__dlpack__, __cuda_array_interface__, __array_interface__)")
    if protocol == DLPACK:
        return _from_dlpack(cls, obj, stream)
    if protocol == CUDA_ARRAY_INTERFACE:
        return _from_cuda_array_interface(cls, obj, stream)
    if protocol == ARRAY_INTERFACE:
        return _from_array_interface(cls, obj)
    raise ValueError("protocol %r is none of %s" % (
        protocol, ", ".join((ANY, DLPACK, CUDA_ARRAY_INTERFACE, ARRAY_INTERFACE))))


def import_owned(data, shape, strides, dtype, device, owner, readonly=False, byte_offset=0,
                 consumer=None, producer=None, cls=None):
    """A view of memory that `owner` keeps valid (held until cugl is done
    with the memory): a DLPack 1.x tensor made here, taken over by libcugl.
    shape, strides (in elements, or None for C order), dtype (code, bits,
    lanes), device (DLPack type, id) as _dlpack.owned_tensor takes them;
    consumer, producer: Streams to order (None: no ordering)."""
    if cls is None:
        from ._view import StridedMemoryView as cls
    address = dl.owned_tensor(data, shape, strides, dtype, device, owner, readonly=readonly,
                              byte_offset=byte_offset)
    try:
        ptr = _take_over(address, True, consumer, producer, consumer is None)
    except BaseException:
        dl.call_deleter(address, True)  # made here: refused, it is ours to delete
        raise
    return cls._wrap(ptr, owner, consumer)


# --- each protocol ------------------------------------------------------------------------

def _from_dlpack(cls, obj, stream):
    try:
        device = obj.__dlpack_device__()
    except AttributeError:
        raise BufferError("%s has no __dlpack_device__" % type(obj).__name__) from None
    device_type, device_id = int(device[0]), int(device[1])
    kwargs = {}
    consumer = None
    if device_type in (dl.CUDA, dl.CUDA_MANAGED):
        consumer = _consumer(stream, device_id)
        kwargs["stream"] = -1 if consumer is None else consumer.handle
    try:
        capsule = obj.__dlpack__(max_version=dl.VERSION, **kwargs)
    except TypeError:
        capsule = obj.__dlpack__(**kwargs)  # a producer of DLPack 0.x
    address, versioned = dl.capsule_tensor(capsule)
    ptr = _take_over(address, versioned, consumer, None, consumer is None)
    # Taken over: the capsule must no longer call the deleter.
    dl.mark_consumed(capsule, versioned)
    return Tensor(obj, cls._wrap(ptr, obj, consumer), True, consumer)


def _from_cuda_array_interface(cls, obj, stream):
    cai = obj.__cuda_array_interface__
    version = cai.get("version")
    if version not in (2, 3):
        raise BufferError("__cuda_array_interface__ version %r; cugl reads 2 and 3"
                          % (version,))
    if cai.get("mask") is not None:
        raise BufferError("__cuda_array_interface__ with a mask is not supported")
    dtype = from_typestr(cai["typestr"])
    shape = tuple(int(x) for x in cai["shape"])
    strides = _element_strides(cai.get("strides"), _dtypes.itemsize(dtype),
                               "__cuda_array_interface__")
    ptr, readonly = cai["data"]
    if ptr:
        device = _device_of_pointer(ptr)
    else:
        device = (dl.CUDA, Device().device_id)  # no memory: any device will do
    producer_handle = cai.get("stream")
    if producer_handle == 0:
        raise BufferError("__cuda_array_interface__ stream 0 is disallowed (ambiguous)")
    consumer = producer = None
    if device[0] != dl.CPU:
        consumer = _consumer(stream, max(device[1], 0))
        if consumer is not None and producer_handle is not None:
            from ._stream import Stream
            producer = Stream.from_handle(int(producer_handle))
    view = import_owned(ptr, shape, strides, dtype, device, obj, readonly=readonly,
                        consumer=consumer, producer=producer, cls=cls)
    return Tensor(obj, view, True, consumer)


def _from_array_interface(cls, obj):
    ai = obj.__array_interface__
    if ai.get("mask") is not None:
        raise BufferError("__array_interface__ with a mask is not supported")
    dtype = from_typestr(ai["typestr"])
    shape = tuple(int(x) for x in ai["shape"])
    strides = _element_strides(ai.get("strides"), _dtypes.itemsize(dtype),
                               "__array_interface__")
    data = ai.get("data")
    if not isinstance(data, tuple):
        raise BufferError("__array_interface__ without a (pointer, read-only) data "
                          "tuple is not supported")
    ptr, readonly = data
    offset = int(ai.get("offset", 0) or 0)
    view = import_owned(ptr, shape, strides, dtype, (dl.CPU, 0), obj, readonly=readonly,
                        byte_offset=offset, cls=cls)
    return Tensor(obj, view, True, None)


# --- what they share ------------------------------------------------------------------------

def from_typestr(typestr):
    """(code, bits, lanes) of an array interface's typestr, e.g. '<f4'."""
    if not isinstance(typestr, str) or len(typestr) < 3:
        raise BufferError("typestr %r is not an array-interface type string" % (typestr,))
    order, kind, size = typestr[0], typestr[1], typestr[2:]
    if not size.isdigit():
        raise BufferError("typestr %r is not an array-interface type string" % typestr)
    nbytes = int(size)
    native = "<" if sys.byteorder == "little" else ">"
    if order not in ("|", "=", native) and nbytes > 1:
        raise BufferError("typestr %r is not in the machine's byte order" % typestr)
    if kind == "V":
        return (dl.OPAQUE, 8, nbytes)
    if kind not in _KINDS:
        raise BufferError("typestr %r: kind %r has no DLPack equivalent (b, i, u, f, c or "
                          "V)" % (typestr, kind))
    return (_KINDS[kind], 8 * nbytes, 1)


def _consumer(stream, device_id):
    """The consumer stream of an import from `device_id`'s memory: the
    stream given (a Stream or an object with __cuda_stream__), for None the
    device's default stream; None for -1 (the caller orders the work)."""
    if isinstance(stream, int) and not isinstance(stream, bool) and stream == -1:
        return None
    device = Device(device_id)
    device.set_current()
    if stream is None:
        return device.default_stream
    return as_stream(stream)


def _take_over(address, versioned, consumer, producer, no_sync):
    """libcugl's view of the DLPack tensor at `address`, which it takes over
    (on success it calls the tensor's deleter, once, when done)."""
    desc = DLPackImportDesc(consumer_stream=consumer._ptr if consumer is not None else None,
                            producer_stream=producer._ptr if producer is not None else None,
                            no_sync=no_sync or consumer is None)
    out = c_void_p()
    lib = load()
    if versioned:
        lib.cugl_view_from_dlpack_versioned(byref(out), address, byref(desc))
    else:
        lib.cugl_view_from_dlpack(byref(out), address, byref(desc))
    return out.value


def _device_of_pointer(ptr):
    """The DLPack device libcugl sees for memory at `ptr` (host without a driver)."""
    lib = load()
    out = c_void_p()
    lib.cugl_buffer_from_handle(byref(out), ptr, 0, None)
    try:
        return _interop.buffer_device(out.value)
    finally:
        lib.cugl_buffer_release(out.value)


def _element_strides(byte_strides, itemsize, what):
    if byte_strides is None:
        return None
    strides = []
    for s in byte_strides:
        if s % itemsize:
            raise BufferError("%s: stride %d bytes is not a multiple of the item size (%d "
                              "bytes)" % (what, s, itemsize))
        strides.append(s // itemsize)
    return strides
