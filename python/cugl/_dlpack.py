"""DLPack in Python: the tensor structs, PyCapsules both ways, and tensors
that describe memory a Python object owns.

The DLPack exchange itself is libcugl's (lib/core/dlpack.c): exports are
made by cugl_buffer_to_dlpack / cugl_view_to_dlpack[_versioned], imports
taken over by cugl_view_from_dlpack[_versioned]. What is here is what the
Python protocol adds around them:

- capsules: an export travels in a capsule named "dltensor" (DLPack 0.x) or
  "dltensor_versioned" (1.x). A consumer renames it "used_..." when it
  takes the tensor over; the capsule's destructor calls the tensor's
  deleter only when nobody did, so the deleter runs exactly once;
- memory described by the CUDA array interface, the NumPy array interface
  or a pointer with an owner is made into a versioned DLPack tensor whose
  deleter drops the Python owner, and libcugl imports that: the memory
  stays alive for as long as any cugl object (or any consumer of a later
  export) uses it.
"""
import ctypes
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
    """Keep `obj` alive until the process ends: capsules and C code may
    reach it after this module is torn down at exit."""
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
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(c_int, c_void_p, c_void_p)(("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(
    ("PyCapsule_SetName", _api))
_PyCapsule_GetName = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", _api))
_CAPSULE_TYPE = type(_PyCapsule_New(1, NAME[False], None))
_PyErr_Fetch = ctypes.PYFUNCTYPE(None, c_void_p, c_void_p, c_void_p)(("PyErr_Fetch", _api))
_PyErr_Restore = ctypes.PYFUNCTYPE(None, c_void_p, c_void_p, c_void_p)(("PyErr_Restore", _api))


def call_deleter(address, versioned):
    """Call a tensor's deleter, if it has one."""
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor
    deleter = cls.from_address(address).deleter
    if deleter:
        deleter(address)


def _make_capsule_destructor(versioned):
    name = NAME[versioned]
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor

    # Runs while the capsule is freed, maybe while an exception is on its
    # way up the stack: it is saved first and put back last, and nothing
    # here looks up a global (everything is bound as a default argument).
    def destructor(capsule, name=name, cls=cls, fetch=_PyErr_Fetch, restore=_PyErr_Restore,
                   is_valid=_PyCapsule_IsValid, get_pointer=_PyCapsule_GetPointer,
                   c_void_p=c_void_p, byref=ctypes.byref):
        saved = (c_void_p(), c_void_p(), c_void_p())
        fetch(byref(saved[0]), byref(saved[1]), byref(saved[2]))
        try:
            # A consumer that took the tensor renamed the capsule "used_...".
            if is_valid(capsule, name):
                address = get_pointer(capsule, name)
                deleter = cls.from_address(address).deleter
                if deleter:
                    deleter(address)
        finally:
            restore(saved[0], saved[1], saved[2])

    return _forever(ctypes.CFUNCTYPE(None, c_void_p)(destructor))


_CAPSULE_DESTRUCTOR = {False: _make_capsule_destructor(False),
                       True: _make_capsule_destructor(True)}


def to_capsule(address, versioned):
    """A capsule carrying the tensor at `address` to a consumer; if it is
    never taken, freeing the capsule calls the tensor's deleter."""
    return _PyCapsule_New(address, NAME[versioned],
                          ctypes.cast(_CAPSULE_DESTRUCTOR[versioned], c_void_p))


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
    """Rename the capsule so that its destructor leaves the tensor alone:
    its deleter is now the consumer's to call."""
    _PyCapsule_SetName(capsule, USED_NAME[versioned])


# --- tensors over memory a Python object owns --------------------------------

_held = {}  # address of a tensor made here -> what it keeps alive


def _drop_held(address, held=_held):
    held.pop(address, None)


_HELD_DELETER = _forever(DELETER(_drop_held))


def held_count():
    """How many tensors made by owned_tensor() are alive (for leak checks)."""
    return len(_held)


def owned_tensor(data, shape, strides, dtype, device, owner, readonly=False, byte_offset=0):
    """A DLPack 1.x tensor over memory `owner` keeps valid; its deleter
    drops `owner`. Returns the tensor's address; the caller hands it to
    libcugl (which calls the deleter once, when done with it) or calls
    call_deleter itself if libcugl refuses it.

    shape and strides are sequences of ints (strides in elements, or None
    for C order); dtype is (code, bits, lanes); device is (type, id).
    """
    ndim = len(shape)
    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    strides_arr = None if strides is None else (c_int64 * max(ndim, 1))(*strides)
    t = DLManagedTensorVersioned()
    t.version = DLPackVersion(*VERSION)
    t.flags = FLAG_READ_ONLY if readonly else 0
    t.deleter = _HELD_DELETER
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


def tensor_device(address, versioned):
    """(device_type, device_id) of the tensor at `address`."""
    cls = DLManagedTensorVersioned if versioned else DLManagedTensor
    d = cls.from_address(address).dl_tensor.device
    return d.device_type, d.device_id
