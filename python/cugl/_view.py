"""Strided memory views: cuda.core's StridedMemoryView over view.h and
layout.h, made from DLPack, the CUDA array interface, the NumPy array
interface (each read by _tensor.import_tensor) or a Buffer, and exported
with DLPack (_interop)."""
from ctypes import byref, c_int, c_int64, c_void_p

from . import _dtypes
from . import _errors
from . import _interop
from . import _tensor
from ._handle import Owned
from ._lib import load
from ._stream import stream_ptr
from ._structs import DType, Layout, Slice, ViewCopyDesc

# cugl_blocking (view.h)
_BLOCKING = {None: 0, True: 1, False: 2}


def _release_view(ptr):
    load().cugl_view_release(ptr)


def _layout_of(ndim, shape, strides, itemsize):
    layout = Layout()
    n = max(ndim, 1)
    shape_arr = (c_int64 * n)(*shape)
    strides_arr = None if strides is None else (c_int64 * n)(*strides)
    load().cugl_layout_init(byref(layout), ndim, shape_arr, strides_arr, itemsize)
    return layout


class StridedMemoryView(Owned):
    """A typed, strided window onto memory (cuda.core's StridedMemoryView).

    StridedMemoryView(obj, stream=None) is from_any_interface(obj, stream).
    The view holds what it sees: the buffer, and through it the exporting
    object or DLPack tensor, until the view and everything made from it
    (slices, DLPack exports) are gone, or close() drops it sooner.

    `stream` of the constructors: the stream that will use the data. The
    producer's pending work is ordered before it (DLPack: the producer is
    given it; the CUDA array interface: it waits for the interface's
    `stream`). None means the device's default stream, -1 no ordering
    (the caller's affair). Host memory needs none.
    """

    _dl_device = None  # __dlpack_device__'s answer, once asked
    _consumer_streams = None  # order_consumer's `streams`, where the owner keeps them

    def __init__(self, obj, stream=None):
        other = StridedMemoryView.from_any_interface(obj, stream)
        self._own(load().cugl_view_retain(other._ptr), _release_view)
        self._exporting_obj, self._stream = other._exporting_obj, other._stream

    @classmethod
    def _wrap(cls, ptr, exporting_obj=None, stream=None):
        """Take over one reference to a cugl_view."""
        v = cls.__new__(cls)
        v._own(ptr, _release_view)
        v._exporting_obj = exporting_obj
        v._stream = stream  # the stream known to use (write) it, for DLPack consumers
        return v

    # --- constructors ---

    # Each reads its protocol through _tensor.import_tensor, the one place
    # an object becomes a view.

    @classmethod
    def from_dlpack(cls, obj, stream=None):
        """A view of an object with __dlpack__ and __dlpack_device__ (DLPack
        1.x, or 0.x where the producer offers no more)."""
        return _tensor.import_tensor(obj, stream, _tensor.DLPACK, cls).view

    @classmethod
    def from_cuda_array_interface(cls, obj, stream=None):
        """A view of an object with __cuda_array_interface__ (version 2 or 3;
        v3's `stream` is waited for on the consumer's stream)."""
        return _tensor.import_tensor(obj, stream, _tensor.CUDA_ARRAY_INTERFACE, cls).view

    @classmethod
    def from_array_interface(cls, obj):
        """A view of host memory described by __array_interface__ (NumPy's)."""
        return _tensor.import_tensor(obj, None, _tensor.ARRAY_INTERFACE, cls).view

    @classmethod
    def from_any_interface(cls, obj, stream=None):
        """DLPack first, then the CUDA array interface, then the NumPy array
        interface (also where DLPack refuses a host array, as NumPy 1.x does
        read-only ones); a view is returned as it is."""
        return _tensor.import_tensor(obj, stream, _tensor.ANY, cls).view

    @classmethod
    def from_buffer(cls, buffer, shape, strides=None, *, itemsize=None, dtype=None,
                    is_readonly=False):
        """A view of `buffer` with `shape` and `strides` (in elements; None:
        C order). Give `dtype`, or `itemsize` alone for an untyped view."""
        from ._memory import Buffer
        if not isinstance(buffer, Buffer):
            raise TypeError("buffer must be a Buffer, not %s" % type(buffer).__name__)
        if dtype is None and itemsize is None:
            raise ValueError("Either itemsize or dtype must be specified")
        d = _dtypes.from_any(dtype) if dtype is not None else _dtypes.UNTYPED
        size = itemsize if itemsize is not None else _dtypes.itemsize(d)
        shape = tuple(int(x) for x in shape)
        layout = _layout_of(len(shape), shape, strides, size)
        out = c_void_p()
        load().cugl_view_from_buffer(byref(out), buffer._ptr, byref(layout), DType(*d),
                                     bool(is_readonly))
        return cls._wrap(out.value, buffer, buffer._stream)

    # --- what it is ---

    def _p(self):
        if self._ptr is None:
            raise _errors.ClosedError("StridedMemoryView: the view has been closed")
        return self._ptr

    def _layout(self):
        return load().cugl_view_layout(self._p()).contents

    @property
    def ptr(self):
        """The address of element (0, ..., 0)."""
        return load().cugl_view_ptr(self._p())

    @property
    def device_id(self):
        """The device's ordinal; -1 for memory only the host can reach."""
        return load().cugl_view_device_id(self._p())

    @property
    def is_device_accessible(self):
        return load().cugl_view_is_device_accessible(self._p())

    @property
    def is_host_accessible(self):
        return load().cugl_view_is_host_accessible(self._p())

    @property
    def readonly(self):
        return load().cugl_view_readonly(self._p())

    @property
    def exporting_obj(self):
        """The object the view was made from (for from_buffer, the Buffer)."""
        return self._exporting_obj

    @property
    def stream(self):
        """The stream the view was imported for (DLPack consumers of this
        view wait for it), or None."""
        return self._stream

    @property
    def ndim(self):
        return self._layout().ndim

    @property
    def shape(self):
        lay = self._layout()
        return tuple(lay.shape[:lay.ndim])

    @property
    def strides(self):
        """Strides in elements."""
        lay = self._layout()
        return tuple(lay.strides[:lay.ndim])

    @property
    def strides_in_bytes(self):
        lay = self._layout()
        out = (c_int64 * max(lay.ndim, 1))()
        load().cugl_layout_strides_in_bytes(byref(lay), out)
        return tuple(out[:lay.ndim])

    @property
    def itemsize(self):
        return self._layout().itemsize

    @property
    def slice_offset(self):
        """Elements from the buffer's start to element (0, ..., 0)."""
        return self._layout().slice_offset

    @property
    def size(self):
        """The number of elements."""
        return load().cugl_layout_volume(byref(self._layout()))

    @property
    def dlpack_dtype(self):
        """The element type as DLPack's (code, bits, lanes)."""
        d = load().cugl_view_dtype(self._p())
        return (d.code, d.bits, d.lanes)

    @property
    def dtype(self):
        """The NumPy dtype; None for an untyped view."""
        return _dtypes.to_numpy(self.dlpack_dtype)

    @property
    def is_contiguous_c(self):
        return load().cugl_layout_is_contiguous_c(byref(self._layout()))

    @property
    def is_contiguous_f(self):
        return load().cugl_layout_is_contiguous_f(byref(self._layout()))

    @property
    def is_dense(self):
        return load().cugl_layout_is_dense(byref(self._layout()))

    @property
    def buffer(self):
        """The Buffer the view sees (for an import, the one cugl made around
        the tensor, which holds it)."""
        from ._memory import Buffer
        lib = load()
        ptr = lib.cugl_buffer_retain(lib.cugl_view_buffer(self._p()))
        return Buffer._wrap(ptr, stream=self._stream)

    # --- new views of the same memory ---

    def _with_layout(self, layout, dtype=_dtypes.UNTYPED):
        out = c_void_p()
        load().cugl_view_view(byref(out), self._p(), byref(layout), DType(*dtype))
        return StridedMemoryView._wrap(out.value, self._exporting_obj, self._stream)

    def __getitem__(self, key):
        """Basic indexing: ints drop an axis, slices keep it (any step);
        one Ellipsis stands for the axes not named."""
        key = key if isinstance(key, tuple) else (key,)
        ndim = self.ndim
        if any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            if Ellipsis in key[i + 1:]:
                raise IndexError("an index can only have a single ellipsis ('...')")
            fill = ndim - (len(key) - 1)
            key = key[:i] + (slice(None),) * max(fill, 0) + key[i + 1:]
        slices = (Slice * max(len(key), 1))()
        for s, k in zip(slices, key):
            if isinstance(k, slice):
                s.has_start, s.has_stop = k.start is not None, k.stop is not None
                s.start = k.start or 0
                s.stop = k.stop or 0
                s.step = 1 if k.step is None else k.step
            elif isinstance(k, int) or hasattr(k, "__index__"):
                s.is_index, s.index = True, k.__index__()
            else:
                raise TypeError("Invalid slice: %r. Expected slice instance or integer."
                                % (k,))
        out = Layout()
        load().cugl_layout_sliced(byref(out), byref(self._layout()), len(key), slices)
        return self._with_layout(out)

    def reshape(self, shape):
        """The same elements in a new shape, without a copy (one extent may
        be -1); refused where the strides cannot express it."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        out = Layout()
        load().cugl_layout_reshaped(byref(out), byref(self._layout()), len(shape),
                                    (c_int64 * max(len(shape), 1))(*shape))
        return self._with_layout(out)

    def transpose(self, axes=None):
        """Axes reordered: axis i of the result is axis axes[i] (default: reversed)."""
        ndim = self.ndim
        axes = tuple(reversed(range(ndim))) if axes is None else tuple(axes)
        out = Layout()
        load().cugl_layout_permuted(byref(out), byref(self._layout()),
                                    (c_int * max(len(axes), 1))(*axes))
        return self._with_layout(out)

    @property
    def T(self):
        return self.transpose()

    def view(self, dtype=None):
        """The same memory seen with another dtype; a different item size is
        packed or unpacked along the last axis (whose stride must be 1)."""
        if dtype is None:
            return self._with_layout(self._layout(), self.dlpack_dtype)
        d = _dtypes.from_any(dtype)
        size = _dtypes.itemsize(d)
        layout = self._layout()
        if size != layout.itemsize:
            out = Layout()
            load().cugl_layout_repacked(byref(out), byref(layout), size, self.ptr, -1, True)
            layout = out
        return self._with_layout(layout, d)

    # --- copies ---

    def copy_from(self, other, stream=None, *, allocator=None, blocking=None):
        """Copy `other` (same shape and item size, any strides; a view or
        anything from_any_interface takes) into this view, on `stream`
        (None only between host views). blocking: None waits for copies
        that touch host memory only; True always; False where it can."""
        src = _as_view(other, stream)
        sptr, _ = stream_ptr(stream)
        desc = ViewCopyDesc(allocator=allocator._ptr if allocator is not None else None,
                            blocking=_BLOCKING[blocking])
        load().cugl_view_copy_from(self._p(), src._p(), sptr, byref(desc))

    def copy_to(self, other, stream=None, *, allocator=None, blocking=None):
        """Copy this view into `other`; as copy_from."""
        dst = _as_view(other, stream)
        dst.copy_from(self, stream, allocator=allocator, blocking=blocking)

    # --- lifetime ---

    def close(self):
        """Drop the view's reference now: what it held (its buffer, the
        exporting object, which exporting_obj no longer names) is let go
        once nothing else of cugl uses it."""
        self._drop()
        self._exporting_obj = None

    @property
    def is_closed(self):
        return self._ptr is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- DLPack ---

    def __dlpack_device__(self):
        ptr = self._p()
        if self._dl_device is None:  # a view's buffer, and its device, never change
            self._dl_device = _interop.buffer_device(load().cugl_view_buffer(ptr))
        return self._dl_device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The view as a DLPack tensor, without a copy: 1.x when max_version
        allows, else 0.x (which cannot say read-only: such a view refuses).
        A consumer's `stream` waits for the view's `stream`."""
        device = self.__dlpack_device__()
        versioned = _interop.negotiate(max_version, dl_device, copy, device)
        _interop.order_consumer(self._stream, stream, device, self._consumer_streams)
        try:
            return _interop.export_view(self._p(), versioned)
        except (_errors.InvalidArgumentError, _errors.NotSupportedError) as e:
            raise BufferError(e.message) from e

    def __repr__(self):
        if self._ptr is None:
            return "<StridedMemoryView closed>"
        return "<StridedMemoryView ptr=0x%x shape=%s strides=%s dtype=%s device_id=%d%s>" % (
            self.ptr, self.shape, self.strides, _dtypes.name(self.dlpack_dtype),
            self.device_id, " readonly" if self.readonly else "")


def _as_view(obj, stream):
    if isinstance(obj, StridedMemoryView):
        return obj
    return StridedMemoryView.from_any_interface(obj, stream)


def from_dlpack(obj, *, stream=None):
    """A StridedMemoryView of anything with __dlpack__, __cuda_array_interface__
    or __array_interface__ (see StridedMemoryView for `stream`)."""
    return StridedMemoryView.from_any_interface(obj, stream)

