"""The address of a host object's memory through the buffer protocol."""
import contextlib
import ctypes
from ctypes import c_char_p, c_int, c_ssize_t, c_void_p


class _PyBuffer(ctypes.Structure):
    _fields_ = [("buf", c_void_p), ("obj", c_void_p), ("len", c_ssize_t),
                ("itemsize", c_ssize_t), ("readonly", c_int), ("ndim", c_int),
                ("format", c_char_p), ("shape", c_void_p), ("strides", c_void_p),
                ("suboffsets", c_void_p), ("internal", c_void_p)]


_PyBUF_WRITABLE = 0x0001
_PyBUF_C_CONTIGUOUS = 0x0020 | 0x0010 | 0x0008  # | PyBUF_STRIDES

_GetBuffer = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, ctypes.POINTER(_PyBuffer), c_int)(
    ("PyObject_GetBuffer", ctypes.pythonapi))
_Release = ctypes.PYFUNCTYPE(None, ctypes.POINTER(_PyBuffer))(
    ("PyBuffer_Release", ctypes.pythonapi))


@contextlib.contextmanager
def host_memory(obj, writable, what):
    """(address, size) of the C-contiguous memory of a buffer-protocol
    object, held for the duration of the with block."""
    view = _PyBuffer()
    flags = _PyBUF_C_CONTIGUOUS | (_PyBUF_WRITABLE if writable else 0)
    try:
        _GetBuffer(obj, ctypes.byref(view), flags)
    except (BufferError, TypeError) as e:
        raise TypeError("%s must be a Buffer or a %sC-contiguous buffer-protocol object, "
                        "not %s (%s)" % (what, "writable " if writable else "",
                                         type(obj).__name__, e)) from None
    try:
        yield view.buf or 0, view.len
    finally:
        _Release(ctypes.byref(view))
