"""Element types: cugl_dtype (DLPack's code, bits, lanes) and their names.

A dtype may be given as a NumPy dtype (or anything numpy.dtype() accepts,
where NumPy is installed), as one of the names below, or as a
(code, bits, lanes) tuple. NumPy is optional for the package: without it
names and tuples work, and `StridedMemoryView.dtype` needs it.
"""
from . import _dlpack as dl

# name -> (code, bits): the scalar types DLPack and NumPy share, and bfloat16.
SCALARS = {
    "bool": (dl.BOOL, 8),
    "int8": (dl.INT, 8), "int16": (dl.INT, 16), "int32": (dl.INT, 32), "int64": (dl.INT, 64),
    "uint8": (dl.UINT, 8), "uint16": (dl.UINT, 16), "uint32": (dl.UINT, 32),
    "uint64": (dl.UINT, 64),
    "float16": (dl.FLOAT, 16), "float32": (dl.FLOAT, 32), "float64": (dl.FLOAT, 64),
    "bfloat16": (dl.BFLOAT, 16),
    "complex64": (dl.COMPLEX, 64), "complex128": (dl.COMPLEX, 128),
}
NAMES = {v: k for k, v in SCALARS.items()}

UNTYPED = (0, 0, 0)  # a zero cugl_dtype: opaque bytes of the layout's item size


def _numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def from_any(dtype):
    """(code, bits, lanes) of a dtype given any way the package accepts."""
    if isinstance(dtype, tuple) and len(dtype) == 3 and all(isinstance(x, int) for x in dtype):
        return dtype
    if isinstance(dtype, str) and dtype in SCALARS:
        return SCALARS[dtype] + (1,)
    np = _numpy()
    if np is None:
        raise TypeError("dtype %r is none of %s (NumPy, which would read it, is not "
                        "installed)" % (dtype, ", ".join(SCALARS)))
    d = np.dtype(dtype)
    if d.name in SCALARS:
        return SCALARS[d.name] + (1,)
    if d.kind == "V" and d.fields is None and d.subdtype is None:
        return (dl.OPAQUE, 8, d.itemsize)
    raise TypeError("dtype %s has no DLPack equivalent (cugl views take %s, or void "
                    "bytes)" % (d, ", ".join(SCALARS)))


def itemsize(dtype):
    code, bits, lanes = dtype
    return bits // 8 * lanes


def name(dtype):
    """The dtype's name ('float32'), or a description of a vector or opaque type."""
    code, bits, lanes = dtype
    if lanes == 1 and (code, bits) in NAMES:
        return NAMES[(code, bits)]
    if code == dl.OPAQUE:
        return "void%d" % (bits // 8 * lanes * 8)
    return "(code %d, %d bits, %d lanes)" % dtype


def to_numpy(dtype):
    """The NumPy dtype of a cugl dtype; None for an untyped (opaque) one."""
    code, bits, lanes = dtype
    if code == dl.OPAQUE:
        return None
    np = _numpy()
    if np is None:
        raise ImportError("StridedMemoryView.dtype is a NumPy dtype and NumPy is not "
                          "installed; dlpack_dtype gives (code, bits, lanes)")
    if lanes != 1 or (code, bits) not in NAMES:
        raise NotImplementedError("dtype %s has no NumPy equivalent" % name(dtype))
    try:
        return np.dtype(NAMES[(code, bits)])
    except TypeError:
        raise NotImplementedError("NumPy has no %s (the ml_dtypes package adds it)"
                                  % NAMES[(code, bits)]) from None
