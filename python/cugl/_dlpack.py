"""DLPack in Python: the tensor structs, PyCapsules both ways, and tensors
that describe memory a Python object owns.

The DLPack exchange itself is libcugl's (lib/core/dlpack.c): exports are
made by cugl_buffer_to_dlpack / cugl_view_to_dlpack[_versioned], imports
taken over by cugl_view_from_dlpack[_versioned]. What is here is what the
Python protocol adds around them:

- capsules: an export travels in a capsule named "dltensor" (DLPack 0.x) or
  "dltensor_versioned" (1.x). A consumer renames it "used_..." when it
  takes the tensor over, and calls its deleter when done;
- memory described by the CUDA array interface, the NumPy array interface
  or a pointer with an owner is made into a versioned DLPack tensor that
  holds the Python owner, and libcugl imports that: the memory stays alive
  for as long as any cugl object (or any consumer of a later export) uses
  it.

No Python runs inside a C release path. Capsules and deleters are freed
and called from C, by consumers too, and at times while an exception is on
its way up the stack (a consumer that refuses a capsule frees it with its
error set; a tensor dropped during unwinding calls its deleter then); a
ctypes callback run at such a moment cannot leave the pending exception
as it found it, and the interpreter then fails. So exported capsules have
no destructor: they are listed, and sweep() deletes the tensors of those
nobody took once nobody holds the capsule. And a tensor made here has C's
time() as its deleter: it writes the time into the tensor's first eight
bytes (its version, which nothing reads after the import), and sweep()
lets go of the owner of each tensor so marked. sweep() runs where Python
may run: after every release of a cugl object by this package (from weakref
finalizers, which keep a pending exception aside), at each garbage
collection, at each export and at exit.
"""
import atexit
import ctypes
import gc
import sys
import threading
from ctypes import c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p

# DLDeviceType values that cugl imports and exports.
CPU = 1
CUDA = 2
CUDA_HOST = 3
CUDA_MANAGED = 13

# DLDataTypeCode values (cugl_dtype_code has the same numbers).
INT, UINT, FLOAT, OPAQUE, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 3, 4, 5, 6

FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

VERSION = (1, 0)  # the versioned tensors cugl reads and writes (major 1)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(c_int64)),
        ("strides", ctypes.POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", DELETER),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


def _forever(obj):
    """Keep `obj` alive until the process ends: capsules (their names) and C
    code may reach it after this module is torn down at exit."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    return obj


def _static_name(text):
    buf = _forever(ctypes.create_string_buffer(text))
    return ctypes.addressof(buf)


NAME = {False: _static_name(b"dltensor"), True: _static_name(b"dltensor_versioned")}
USED_NAME = {False: _static_name(b"used_dltensor"),
             True: _static_name(b"used_dltensor_versioned")}
NAME_TEXT = {False: "dltensor", True: "dltensor_versioned"}

_api = ctypes.pythonapi
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_New", _api))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(
    ("PyCapsule_SetName", _api))
_PyCapsule_GetName = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", _api))
_CAPSULE_TYPE = type(_PyCapsule_New(1, NAME[False], None))


def call_deleter(address, versioned):
    """Call a tensor's deleter, if it has one."""
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor
    deleter = cls.from_address(address).deleter
    if deleter:
        deleter(address)


# --- exports ------------------------------------------------------------------

_lock = threading.Lock()  # guards _exports against a sweep's rewrite; one sweep at a time
_exports = []  # [capsule, address, versioned]: given out, not yet seen taken or dropped


def to_capsule(address, versioned):
    """A capsule carrying the tensor at `address` to a consumer. If nobody
    takes the tensor, a sweep after the capsule is dropped calls its deleter."""
    sweep()
    capsule = _PyCapsule_New(address, NAME[versioned], None)
    with _lock:
        _exports.append([capsule, address, versioned])
    return capsule


def capsule_tensor(capsule):
    """(address, versioned) of the tensor in a producer's capsule.

    Raises BufferError for anything else, a capsule already consumed among it.
    """
    if type(capsule) is not _CAPSULE_TYPE:
        raise BufferError("__dlpack__ returned %s, not a PyCapsule" % type(capsule).__name__)
    raw = _PyCapsule_GetName(capsule)
    name = raw.decode() if raw else ""
    for versioned in (True, False):
        if name == NAME_TEXT[versioned]:
            return _PyCapsule_GetPointer(id(capsule), NAME[versioned]), versioned
    raise BufferError("the DLPack capsule is named %r; expected 'dltensor_versioned' or "
                      "'dltensor' (one named 'used_...' was consumed already)" % name)


def mark_consumed(capsule, versioned):
    """Rename a producer's capsule so that its destructor leaves the tensor
    alone: the deleter is now ours (libcugl's) to call."""
    _PyCapsule_SetName(capsule, USED_NAME[versioned])


# --- tensors over memory a Python object owns --------------------------------

_held = {}  # address of a tensor made here -> what it keeps alive

# C's time(time_t *): the deleter of the tensors made here. It runs no
# Python, and marks the tensor: its first word (the version) takes the time.
_libc = ctypes.CDLL(None)
_MARK_DELETED = DELETER(ctypes.cast(_libc.time, c_void_p).value)
_LIVE_WORD = int.from_bytes(bytes(DLPackVersion(*VERSION)), sys.byteorder)


def _deleted(address):
    return c_int64.from_address(address).value != _LIVE_WORD


def owned_tensor(data, shape, strides, dtype, device, owner, readonly=False, byte_offset=0):
    """A DLPack 1.x tensor over memory `owner` keeps valid; `owner` is let
    go of by the first sweep after the tensor's deleter has run. Returns the
    tensor's address; the caller hands it to libcugl (which calls the
    deleter once, when done with it) or calls call_deleter itself if
    libcugl refuses it.

    shape and strides are sequences of ints (strides in elements, or None
    for C order); dtype is (code, bits, lanes); device is (type, id).
    """
    ndim = len(shape)
    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    strides_arr = None if strides is None else (c_int64 * max(ndim, 1))(*strides)
    t = DLManagedTensorVersioned()
    t.version = DLPackVersion(*VERSION)
    t.flags = FLAG_READ_ONLY if readonly else 0
    t.deleter = _MARK_DELETED
    t.dl_tensor.data = data or None
    t.dl_tensor.device = DLDevice(*device)
    t.dl_tensor.ndim = ndim
    t.dl_tensor.dtype = DLDataType(*dtype)
    t.dl_tensor.shape = shape_arr
    if strides_arr is not None:
        t.dl_tensor.strides = strides_arr
    t.dl_tensor.byte_offset = byte_offset
    address = ctypes.addressof(t)
    _held[address] = (t, shape_arr, strides_arr, owner)
    return address


# --- sweeping -------------------------------------------------------------------

def sweep():
    """Delete the tensors of exports nobody took and nobody holds, and let go
    of the owners of tensors whose deleter has run. Cheap when there is none."""
    if not (_exports or _held):
        return
    if not _lock.acquire(blocking=False):
        return  # a sweep is under way (on this thread: this is one of its releases)
    try:
        untaken = []
        keep = []
        for entry in _exports:
            name = _PyCapsule_GetName(entry[0])
            if name == NAME_TEXT[entry[2]].encode():
                # Held by the list's entry and getrefcount's argument alone: dropped.
                if sys.getrefcount(entry[0]) <= 2:
                    untaken.append((entry[1], entry[2]))
                    continue
                keep.append(entry)
            # else: renamed "used_...", the consumer's now
        _exports[:] = keep
    finally:
        _lock.release()
    for address, versioned in untaken:
        call_deleter(address, versioned)
    for address in [a for a in list(_held) if _deleted(a)]:
        _held.pop(address, None)  # may free the owner, and with it more to sweep


def held_count():
    """How many tensors made by owned_tensor() still hold their owner, after
    a sweep (for leak checks)."""
    sweep()
    return len(_held)


def exports_count():
    """How many exports are neither known taken nor deleted, after a sweep."""
    sweep()
    return len(_exports)


def _sweep_after_collection(phase, info):
    if phase == "stop":
        sweep()


gc.callbacks.append(_sweep_after_collection)
atexit.register(sweep)  # registered before any finalizer: runs after them, at exit


def tensor_device(address, versioned):
    """(device_type, device_id) of the tensor at `address`."""
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor
    d = cls.from_address(address).dl_tensor.device
    return d.device_type, d.device_id
