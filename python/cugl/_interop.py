"""The DLPack protocol's export side for buffers and views: version
negotiation, the consumer's stream, and the capsule around libcugl's tensor."""
import ctypes
from ctypes import byref, c_void_p

from . import _dlpack as dl
from ._lib import load
from ._structs import DType, Layout


def negotiate(max_version, dl_device, copy, own_device):
    """Whether to export a versioned (1.x) tensor, after refusing what cugl
    cannot do (a copy, another device)."""
    if copy:
        raise BufferError("cugl exports memory in place; copy=True is not supported")
    if dl_device is not None and tuple(dl_device) != tuple(own_device):
        raise BufferError("the memory is on DLPack device %s, not %s; cugl exports in place"
                          % (tuple(own_device), tuple(dl_device)))
    if max_version is None:
        return False
    try:
        major = int(max_version[0])
    except (TypeError, ValueError, IndexError):
        raise BufferError("max_version must be a (major, minor) tuple, not %r"
                          % (max_version,)) from None
    return major >= dl.VERSION[0]


def order_consumer(producer, stream, device, streams=None):
    """Make the consumer's stream (the `stream` argument of __dlpack__) wait
    for the work queued so far on `producer`, the stream known to write the
    memory (None: nothing is known, the caller orders the work). For CUDA
    memory, None means the legacy default stream (1), -1 no ordering. A
    producer stream closed since has nothing left to wait for. `streams`:
    a dict that keeps the wrappers of the default streams (1, 2) made here,
    by (device id, handle), for the next export; None makes them anew."""
    if producer is None or stream == -1 or device[0] == dl.CPU or producer.is_closed:
        return
    if stream is None:
        stream = 1
    if isinstance(stream, bool) or not isinstance(stream, int) or stream == 0:
        raise BufferError("stream must be an int other than 0 (1: the legacy default "
                          "stream, 2: the per-thread one, -1: no ordering), not %r" % (stream,))
    if streams is not None and streams.get((device[1], stream)) is producer:
        return  # the producer is the consumer's own stream, kept
    consumer = default_stream(producer.device, stream, streams)
    if consumer.handle == producer.handle and consumer.device is producer.device:
        return
    consumer.wait(producer)


def default_stream(device, handle, streams=None):
    """A Stream of `handle` on `device` (1, 2: that device's default
    streams), kept in and taken from `streams` where given."""
    from ._stream import Stream
    key = (device.device_id, handle)
    if streams is not None and key in streams:
        return streams[key]
    device.set_current()  # a default stream is the current device's
    s = Stream.from_handle(handle)
    if streams is not None and handle in (1, 2):
        streams[key] = s
    return s


def buffer_device(buffer_ptr):
    """The DLPack (device_type, device_id) libcugl gives the buffer."""
    t = c_void_p()
    load().cugl_buffer_to_dlpack(byref(t), buffer_ptr)
    try:
        return dl.tensor_device(t.value, False)
    finally:
        dl.call_deleter(t.value, False)


def _fold_byte_offset(address, versioned):
    """Point `data` at element (0, ..., 0) and make byte_offset 0.

    libcugl's tensors keep the buffer's start in `data` and the view's
    offset in `byte_offset`, as DLPack allows; but consumers that ignore
    byte_offset are common (PyTorch did until its PR #170432), and on CPU
    and CUDA devices a pointer to the first element is what they all read
    right. The deleter does not look at either field.
    """
    cls = dl.DLManagedTensorVersioned if versioned else dl.DLManagedTensor
    t = cls.from_address(address).dl_tensor
    if t.byte_offset:
        t.data = (t.data or 0) + t.byte_offset
        t.byte_offset = 0


def export_view(view_ptr, versioned):
    """A capsule with libcugl's tensor of the view."""
    lib = load()
    t = c_void_p()
    if versioned:
        lib.cugl_view_to_dlpack_versioned(byref(t), view_ptr)
    else:
        lib.cugl_view_to_dlpack(byref(t), view_ptr)
    try:
        _fold_byte_offset(t.value, versioned)
        return dl.to_capsule(t.value, versioned)
    except BaseException:
        dl.call_deleter(t.value, versioned)
        raise


def export_buffer(buffer_ptr, size, versioned):
    """A capsule with libcugl's tensor of the buffer: 1-D uint8, `size` bytes.
    The unversioned one is cugl_buffer_to_dlpack's; the versioned one that
    of a view of the whole buffer."""
    lib = load()
    if not versioned:
        t = c_void_p()
        lib.cugl_buffer_to_dlpack(byref(t), buffer_ptr)
        try:
            return dl.to_capsule(t.value, False)
        except BaseException:
            dl.call_deleter(t.value, False)
            raise
    layout = Layout()
    shape = (ctypes.c_int64 * 1)(size)
    lib.cugl_layout_init(byref(layout), 1, shape, None, 1)
    view = c_void_p()
    lib.cugl_view_from_buffer(byref(view), buffer_ptr, byref(layout),
                              DType(dl.UINT, 8, 1), False)
    try:
        return export_view(view.value, True)
    finally:
        lib.cugl_view_release(view.value)  # the tensor holds its own reference
