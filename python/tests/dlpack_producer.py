"""A DLPack producer for the tests, written with ctypes alone (not with the
package's own capsule code): host tensors over a NumPy array, in versioned
or unversioned capsules, whose deleters count their calls."""
import ctypes
from ctypes import c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p


class Device(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("device", Device), ("ndim", c_int32),
                ("dtype", DataType), ("shape", ctypes.POINTER(c_int64)),
                ("strides", ctypes.POINTER(c_int64)), ("byte_offset", c_uint64)]


Deleter = ctypes.CFUNCTYPE(None, c_void_p)


class Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", Tensor), ("manager_ctx", c_void_p), ("deleter", Deleter)]


class Version(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", Version), ("manager_ctx", c_void_p), ("deleter", Deleter),
                ("flags", c_uint64), ("dl_tensor", Tensor)]


api = ctypes.pythonapi
capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, ctypes.c_char_p, c_void_p)(
    ("PyCapsule_New", api))
capsule_is_valid = ctypes.PYFUNCTYPE(c_int, c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", api))
capsule_get_pointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", api))
capsule_set_name = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", api))
capsule_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", api))

NAMES = {True: b"dltensor_versioned", False: b"dltensor"}
USED = {True: b"used_dltensor_versioned", False: b"used_dltensor"}


class Producer:
    """__dlpack__ of `array` (host memory, or `device` if given); counts
    deleter calls in `deleted`. versioned=None: a DLPack 0.x producer whose
    __dlpack__ has no max_version (it raises TypeError when given one)."""

    def __init__(self, array, versioned=True, device=(1, 0), dtype=None, version=(1, 0),
                 readonly=False):
        self.array = array
        self.versioned = versioned
        self.device = device
        self.dtype = dtype
        self.version = version
        self.readonly = readonly
        self.deleted = 0
        self.made = 0
        self.streams = []
        self._keep = {}
        self._deleter = Deleter(self._delete)
        self._destructors = {v: ctypes.CFUNCTYPE(None, c_void_p)(self._destructor(v))
                             for v in (True, False)}

    def _delete(self, address):
        self.deleted += 1
        self._keep.pop(address, None)

    def _destructor(self, versioned):
        def destroy(capsule):
            if capsule_is_valid(capsule, NAMES[versioned]):
                address = capsule_get_pointer(ctypes.cast(capsule, ctypes.py_object),
                                              NAMES[versioned])
                cls = ManagedVersioned if versioned else Managed
                cls.from_address(address).deleter(address)
        return destroy

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if self.versioned is None and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.streams.append(stream)
        versioned = bool(self.versioned) and max_version is not None and max_version[0] >= 1
        a = self.array
        shape = (c_int64 * max(a.ndim, 1))(*a.shape)
        strides = (c_int64 * max(a.ndim, 1))(*(s // a.itemsize for s in a.strides))
        t = ManagedVersioned() if versioned else Managed()
        if versioned:
            t.version = Version(*self.version)
            t.flags = 1 if self.readonly else 0
        t.deleter = self._deleter
        t.dl_tensor.data = a.ctypes.data
        t.dl_tensor.device = Device(*self.device)
        t.dl_tensor.ndim = a.ndim
        code = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}[a.dtype.kind]
        t.dl_tensor.dtype = DataType(*(self.dtype or (code, a.itemsize * 8, 1)))
        t.dl_tensor.shape = shape
        t.dl_tensor.strides = strides
        address = ctypes.addressof(t)
        self._keep[address] = (t, shape, strides)
        self.made += 1
        return capsule_new(address, NAMES[versioned],
                           ctypes.cast(self._destructors[versioned], c_void_p))


def consume(capsule):
    """Take the tensor out of a capsule as a consumer does; returns
    (address, versioned, the tensor struct)."""
    name = capsule_get_name(capsule)
    versioned = name == NAMES[True]
    assert name == NAMES[versioned], name
    address = capsule_get_pointer(capsule, name)
    capsule_set_name(capsule, USED[versioned])
    cls = ManagedVersioned if versioned else Managed
    return address, versioned, cls.from_address(address)
