"""Host memory through StridedMemoryView: layouts, strides and dtypes read
from NumPy arrays, views of views, copies between host views."""
import numpy as np
import pytest

import cugl

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def expect_same(view, array):
    """The view describes exactly the array's memory."""
    assert view.ptr == array.ctypes.data
    assert view.shape == array.shape
    assert view.strides_in_bytes == array.strides
    assert view.strides == tuple(s // array.itemsize for s in array.strides)
    assert view.dtype == array.dtype
    assert view.itemsize == array.itemsize
    assert view.size == array.size
    assert view.ndim == array.ndim
    assert view.device_id == -1
    assert view.is_host_accessible and not view.is_device_accessible
    assert view.is_contiguous_c == array.flags.c_contiguous
    assert view.is_contiguous_f == array.flags.f_contiguous


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(dtype):
    a = (np.arange(24) % 2 if dtype == "bool" else np.arange(24)).astype(dtype).reshape(2, 3, 4)
    view = cugl.from_dlpack(a)
    expect_same(view, a)
    assert view.dlpack_dtype == {"bool": (6, 8, 1), "int8": (0, 8, 1), "int16": (0, 16, 1),
                                 "int32": (0, 32, 1), "int64": (0, 64, 1),
                                 "uint8": (1, 8, 1), "uint16": (1, 16, 1),
                                 "uint32": (1, 32, 1), "uint64": (1, 64, 1),
                                 "float16": (2, 16, 1), "float32": (2, 32, 1),
                                 "float64": (2, 64, 1), "complex64": (5, 64, 1),
                                 "complex128": (5, 128, 1)}[dtype]
    assert view.exporting_obj is a


LAYOUTS = {
    "C": lambda a: a,
    "F": lambda a: np.asfortranarray(a),
    "transposed": lambda a: a.transpose(2, 0, 1),
    "stepped": lambda a: a[:, ::2, 1::2],
    "reversed": lambda a: a[::-1, :, ::-2],
    "scalar": lambda a: a[1:2, 2:3, 3:4].reshape(()),
    "empty": lambda a: a[:, 6:, :],
    "broadcast": lambda a: np.broadcast_to(a[:1, :1, :], a.shape),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layouts_of_numpy_arrays(layout):
    base = np.arange(2 * 6 * 8, dtype=np.float32).reshape(2, 6, 8)
    a = LAYOUTS[layout](base)
    view = cugl.StridedMemoryView(a)
    if a.size:
        expect_same(view, a)
    else:
        assert view.shape == a.shape and view.size == 0
    back = np.from_dlpack(view) if not view.readonly else None
    if back is not None:
        assert back.ctypes.data == a.ctypes.data or a.size == 0
        np.testing.assert_array_equal(back, a)


def test_a_read_only_array_gives_a_read_only_view():
    a = np.arange(6.0)
    a.flags.writeable = False
    view = cugl.from_dlpack(a)
    assert view.readonly and view.ptr == a.ctypes.data
    with pytest.raises(cugl.InvalidArgumentError) as e:
        view.copy_from(np.zeros(6))
    assert str(e.value) == "cugl_view_copy_from: the destination view is read-only"


def test_array_interface_objects():
    class Described:
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::3]
    view = cugl.StridedMemoryView.from_array_interface(Described(a))
    expect_same(view, a)
    assert isinstance(view.exporting_obj, Described)


def test_slicing_is_cugls_layout_algebra():
    a = np.arange(5 * 7 * 3, dtype=np.int64).reshape(5, 7, 3)
    view = cugl.from_dlpack(a)
    for key in [(1,), (slice(1, 4),), (slice(None, None, -1), 2), (Ellipsis, 1),
                (slice(4, 0, -2), slice(None), slice(2, None)), (-1, -2, -3),
                (slice(10, 20),), (Ellipsis,), (1, Ellipsis, slice(None, None, 2))]:
        sub = view[key]
        want = a[key if Ellipsis in key else key + (Ellipsis,)]  # a view, never a copy
        if want.size:
            expect_same(sub, want)
        else:
            assert sub.shape == want.shape
        np.testing.assert_array_equal(np.from_dlpack(sub), want)


def test_reshape_transpose_and_dtype_views():
    a = np.arange(24, dtype=np.float32)
    view = cugl.from_dlpack(a)
    r = view.reshape((2, -1, 4))
    expect_same(r, a.reshape(2, 3, 4))
    t = r.transpose((2, 0, 1))
    expect_same(t, a.reshape(2, 3, 4).transpose(2, 0, 1))
    expect_same(r.T, a.reshape(2, 3, 4).T)
    as_int = view.view(np.int32)
    expect_same(as_int, a.view(np.int32))
    as_bytes = view.view(np.uint8)
    expect_same(as_bytes, a.view(np.uint8))
    with pytest.raises(cugl.InvalidArgumentError):
        t.reshape(24)  # the strides cannot express it without a copy


def test_from_buffer_over_numpy_memory():
    a = np.arange(20, dtype=np.float64)
    buf = cugl.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    assert buf.handle == a.ctypes.data and buf.size == 160 and buf.owner is a
    assert buf.device_id == -1 and buf.is_host_accessible and not buf.is_device_accessible
    view = cugl.StridedMemoryView.from_buffer(buf, (4, 3), (5, 1), dtype=np.float64)
    want = np.lib.stride_tricks.as_strided(a, (4, 3), (40, 8))
    expect_same(view, want)
    np.testing.assert_array_equal(np.from_dlpack(view), want)
    untyped = cugl.StridedMemoryView.from_buffer(buf, (20,), itemsize=8)
    assert untyped.dtype is None and untyped.dlpack_dtype == (3, 8, 8)
    with pytest.raises(BufferError) as e:
        untyped.__dlpack__(max_version=(1, 0))
    assert str(e.value) == ("cugl_view_to_dlpack_versioned: the view is untyped; DLPack needs "
                            "a dtype (make one with cugl_view_view)")
    assert cugl.StridedMemoryView.from_buffer(buf, (20,), dtype=np.float64).exporting_obj is buf


def test_from_buffer_needs_a_dtype_or_an_itemsize():
    buf = cugl.Buffer.from_handle(0, 0)
    with pytest.raises(ValueError) as e:
        cugl.StridedMemoryView.from_buffer(buf, (0,))
    assert str(e.value) == "Either itemsize or dtype must be specified"


@pytest.mark.parametrize("src_layout, dst_layout", [
    ("transposed", "C"), ("C", "F"), ("reversed", "stepped"), ("broadcast", "C")])
def test_host_to_host_copies_any_strides(src_layout, dst_layout):
    rng = np.random.default_rng(7)
    src = LAYOUTS[src_layout](rng.standard_normal((2, 6, 8)).astype(np.float32))
    dst_base = np.zeros((2, 6, 8) if dst_layout != "stepped" else (2, 12, 8), np.float32)
    dst = LAYOUTS[dst_layout](dst_base)
    if dst.shape != src.shape:
        dst = np.zeros(src.shape, np.float32)
        dst = np.asfortranarray(dst) if dst_layout == "F" else dst
    cugl.from_dlpack(dst).copy_from(src)
    np.testing.assert_array_equal(dst, src)
    out = np.zeros(src.shape, np.float32)
    cugl.from_dlpack(src).copy_to(out)
    np.testing.assert_array_equal(out, src)


def test_copies_refuse_mismatched_shapes():
    with pytest.raises(cugl.InvalidArgumentError) as e:
        cugl.from_dlpack(np.zeros((2, 3))).copy_from(np.zeros((3, 2)))
    assert str(e.value).startswith("cugl_view_copy_from: ")
    assert "(2, 3)" in str(e.value) and "(3, 2)" in str(e.value)


def test_a_view_keeps_its_numpy_array_alive():
    import gc
    import sys
    a = np.arange(1000, dtype=np.int16)
    before = sys.getrefcount(a)
    view = cugl.from_dlpack(a)[10:20]
    del view
    gc.collect()
    assert sys.getrefcount(a) == before
    a2 = np.arange(1000, dtype=np.int16)
    view = cugl.from_dlpack(a2)[10:20]
    ptr = a2.ctypes.data
    del a2
    gc.collect()
    assert view.ptr == ptr + 20
    np.testing.assert_array_equal(np.from_dlpack(view), np.arange(10, 20, dtype=np.int16))


def test_every_protocol_is_read_in_one_place():
    """_tensor.import_tensor: what the constructors and Viewer.show() get."""
    from cugl import _tensor

    class Described:
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for obj, protocol in [(a, _tensor.ANY), (a, _tensor.DLPACK),
                          (Described(a), _tensor.ANY), (Described(a), _tensor.ARRAY_INTERFACE)]:
        t = _tensor.import_tensor(obj, -1, protocol)
        assert t.owned and t.view.exporting_obj is obj and t.stream is None
        expect_same(t.view, a)
        assert (t.dtype, t.name, t.shape, t.device_id) == ((2, 32, 1), "float32", (3, 4), -1)
        assert t.numpy().ctypes.data == a.ctypes.data
        t.close()
        assert t.view.is_closed
    view = cugl.from_dlpack(a)
    t = _tensor.import_tensor(view)
    assert t.view is view and not t.owned
    t.close()  # not made there: left open
    assert not view.is_closed
    with pytest.raises(BufferError) as e:
        _tensor.import_tensor(object())
    assert "does not support any data exchange protocol" in str(e.value)
    with pytest.raises(ValueError):
        _tensor.import_tensor(a, protocol="__buffer__")
    assert _tensor.from_typestr("<f4") == (2, 32, 1)
    with pytest.raises(BufferError):
        _tensor.from_typestr(">f4" if np.little_endian else "<f4")
