"""DLPack both ways on the host: version negotiation, zero-copy round
trips with NumPy, and deleters called exactly once on every path."""
import gc
import sys

import numpy as np
import pytest

import cugl
from cugl import _dlpack

from dlpack_producer import Producer, consume


@pytest.fixture(autouse=True)
def nothing_left_behind(live):
    yield
    gc.collect()
    assert _dlpack.held_count() == 0


def test_numpy_to_cugl_to_numpy_shares_the_memory():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)[:, 1:, ::2]
    view = cugl.from_dlpack(a)
    b = np.from_dlpack(view)
    assert b.ctypes.data == a.ctypes.data and b.strides == a.strides
    np.testing.assert_array_equal(b, a)
    a[1, 1, 1] = -7
    assert b[1, 1, 1] == -7


def test_buffers_export_their_bytes():
    a = np.arange(16, dtype=np.uint16)
    buf = cugl.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    assert buf.__dlpack_device__() == (1, 0)
    for max_version in (None, (1, 0), (1, 3), (2, 0)):
        capsule = buf.__dlpack__(max_version=max_version)
        address, versioned, t = consume(capsule)
        assert versioned == (max_version is not None)
        d = t.dl_tensor
        assert d.data == a.ctypes.data and d.ndim == 1 and d.shape[0] == 32
        assert (d.dtype.code, d.dtype.bits, d.dtype.lanes) == (1, 8, 1)
        assert (d.device.device_type, d.device.device_id) == (1, 0)
        if versioned:
            assert (t.version.major, t.version.minor) == (1, 0) and t.flags == 0
        t.deleter(address)
    np.testing.assert_array_equal(np.from_dlpack(buf), a.view(np.uint8))


@pytest.mark.parametrize("max_version, versioned", [
    (None, False), ((0, 8), False), ((1, 0), True), ((1, 1), True), ((3, 0), True)])
def test_views_negotiate_the_version(max_version, versioned):
    a = np.arange(6, dtype=np.int32).reshape(2, 3).T
    view = cugl.from_dlpack(a)
    address, got, t = consume(view.__dlpack__(max_version=max_version))
    assert got == versioned
    d = t.dl_tensor
    assert d.data == a.ctypes.data and d.byte_offset == 0 and d.ndim == 2
    assert (d.shape[0], d.shape[1], d.strides[0], d.strides[1]) == (3, 2, 1, 3)
    t.deleter(address)


def test_a_read_only_view_exports_versioned_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    view = cugl.from_dlpack(a)
    address, versioned, t = consume(view.__dlpack__(max_version=(1, 0)))
    assert versioned and t.flags == _dlpack.FLAG_READ_ONLY
    t.deleter(address)
    with pytest.raises(BufferError) as e:
        view.__dlpack__()
    assert "read-only" in str(e.value)


def test_negative_strides_keep_the_lowest_address_as_data():
    a = np.arange(10, dtype=np.int64)[::-1]
    view = cugl.from_dlpack(a)
    assert view.strides == (-1,) and view.ptr == a.ctypes.data
    address, versioned, t = consume(view.__dlpack__(max_version=(1, 0)))
    d = t.dl_tensor
    assert d.data + d.byte_offset == a.ctypes.data and d.strides[0] == -1
    t.deleter(address)
    np.testing.assert_array_equal(np.from_dlpack(view), a)


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_exports_point_data_at_the_first_element(max_version):
    # Consumers that ignore byte_offset (PyTorch before its PR #170432) read
    # the right elements all the same.
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = cugl.from_dlpack(a)[1:, 2::2]
    address, versioned, t = consume(view.__dlpack__(max_version=max_version))
    d = t.dl_tensor
    assert d.byte_offset == 0 and d.data == a[1:, 2::2].ctypes.data
    t.deleter(address)


def test_copies_and_other_devices_are_refused():
    view = cugl.from_dlpack(np.zeros(3))
    with pytest.raises(BufferError):
        view.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        view.__dlpack__(dl_device=(2, 0))
    view.__dlpack__(dl_device=(1, 0), copy=False)  # the view's own device is fine


@pytest.mark.parametrize("versioned", [True, None], ids=["1.x", "0.x"])
def test_an_import_calls_the_producers_deleter_once_at_the_last_release(versioned):
    p = Producer(np.arange(12, dtype=np.float32).reshape(3, 4), versioned=versioned)
    view = cugl.from_dlpack(p)
    assert p.made == 1 and p.deleted == 0 and p.streams == [None]
    sub = view[1:, ::2]
    exported = np.from_dlpack(sub)
    del view, sub
    gc.collect()
    assert p.deleted == 0  # the NumPy array still holds it, through cugl
    np.testing.assert_array_equal(exported, p.array[1:, ::2])
    del exported
    gc.collect()
    assert p.deleted == 1


def test_a_refused_import_leaves_the_deleter_to_the_capsule():
    p = Producer(np.zeros(4, np.float32), device=(10, 0))  # kDLOpenCL
    with pytest.raises(cugl.NotSupportedError) as e:
        cugl.from_dlpack(p)
    assert str(e.value) == ("cugl_view_from_dlpack_versioned: DLPack device type 10 is not "
                            "supported (kDLCPU, kDLCUDA, kDLCUDAHost and kDLCUDAManaged are)")
    assert p.deleted == 0  # the capsule lives on in the traceback's frames
    del e
    gc.collect()
    assert p.made == 1 and p.deleted == 1


def test_a_newer_major_version_is_refused_and_deleted_once():
    p = Producer(np.zeros(4, np.float32), version=(2, 0))
    with pytest.raises(cugl.NotSupportedError) as e:
        cugl.from_dlpack(p)
    assert str(e.value) == ("cugl_view_from_dlpack_versioned: the tensor is DLPack 2.0; cugl "
                            "reads major version 1")
    del e
    gc.collect()
    assert p.deleted == 1


def test_the_versioned_read_only_flag_is_kept():
    p = Producer(np.zeros(4, np.float32), readonly=True)
    view = cugl.from_dlpack(p)
    assert view.readonly
    del view
    gc.collect()
    assert p.deleted == 1


def test_a_consumed_capsule_is_not_consumed_twice():
    capsule = cugl.from_dlpack(np.zeros(2)).__dlpack__(max_version=(1, 0))

    class Again:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            return capsule

    cugl.from_dlpack(Again())
    with pytest.raises(BufferError) as e:
        cugl.from_dlpack(Again())
    assert "consumed already" in str(e.value)


def test_an_export_nobody_takes_is_deleted_by_the_next_sweep(live):
    objects = live[0]
    a = np.arange(8.0)
    view = cugl.from_dlpack(a)
    held = cugl.live_objects()
    for max_version in (None, (1, 0)):
        capsule = view.__dlpack__(max_version=max_version)
        assert cugl.live_objects() == held  # the tensor holds the view, no new object
        del capsule
        gc.collect()
    buf = view.buffer
    for max_version in (None, (1, 0)):
        capsule = buf.__dlpack__(max_version=max_version)
        del capsule
        gc.collect()
    del view, buf
    gc.collect()
    assert cugl.live_objects() == objects


def test_no_python_runs_when_c_frees_a_capsule_or_calls_a_deleter():
    # Exported capsules have no destructor, and the tensors made over Python
    # memory have C's time() as their deleter: C code may free or call them
    # with an exception pending, which no Python callback survives.
    import ctypes
    get_destructor = ctypes.pythonapi.PyCapsule_GetDestructor
    get_destructor.restype, get_destructor.argtypes = ctypes.c_void_p, [ctypes.py_object]
    view = cugl.from_dlpack(np.arange(3.0))
    for max_version in (None, (1, 0)):
        capsule = view.__dlpack__(max_version=max_version)
        assert get_destructor(capsule) is None
    del capsule
    libc_time = ctypes.cast(ctypes.CDLL(None).time, ctypes.c_void_p).value
    a = np.arange(4.0)
    address = _dlpack.owned_tensor(a.ctypes.data, (4,), None, (2, 64, 1), (1, 0), a)
    t = _dlpack.DLManagedTensorVersioned.from_address(address)
    assert ctypes.cast(t.deleter, ctypes.c_void_p).value == libc_time
    assert _dlpack.held_count() == 1
    t.deleter(address)
    assert _dlpack.held_count() == 0


def test_a_consumer_that_refuses_a_capsule_gets_its_own_error(live):
    objects = live[0]
    a = np.zeros(8, np.float32)
    buf = cugl.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    pairs = cugl.StridedMemoryView.from_buffer(buf, (4,), dtype=(2, 32, 2))  # 2-lane float32
    # NumPy has no vector dtypes: it frees the capsule with its error set,
    # and the error stays NumPy's.
    with pytest.raises(Exception) as e:
        np.from_dlpack(pairs)
    assert not isinstance(e.value, SystemError), e.value
    assert "lanes" in str(e.value)
    del e, pairs, buf
    gc.collect()
    assert _dlpack.exports_count() == 0 and cugl.live_objects() == objects


def test_a_capsule_freed_while_an_exception_is_raised_keeps_the_exception(live):
    objects = live[0]
    view = cugl.from_dlpack(np.arange(3.0))
    with pytest.raises(ZeroDivisionError):
        # The capsule is on the stack when 1 / 0 raises: it is freed, and its
        # deleter run, while the ZeroDivisionError is on its way up.
        [view.__dlpack__(max_version=(1, 0)), 1 / 0]
    del view
    gc.collect()
    assert cugl.live_objects() == objects


def test_an_export_a_consumer_took_is_left_to_it():
    a = np.arange(8.0)
    view = cugl.from_dlpack(a)
    capsule = view.__dlpack__(max_version=(1, 0))
    address, versioned, t = consume(capsule)
    del view, capsule
    gc.collect()
    # The consumer owns the tensor: it still describes the memory.
    assert t.dl_tensor.data == a.ctypes.data
    t.deleter(address)


def test_memory_owned_by_python_freed_while_an_exception_is_raised(live):
    class Described:
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    a = np.arange(4.0)
    with pytest.raises(ZeroDivisionError):
        # The NumPy array, last holder of the view over `a`, is freed on the
        # way up: cugl lets go of the tensor that holds `a` then.
        [np.from_dlpack(cugl.StridedMemoryView.from_array_interface(Described(a))), 1 / 0]
    gc.collect()
    assert _dlpack.held_count() == 0


def test_memory_owned_by_python_is_held_until_cugl_lets_go():
    a = np.arange(100, dtype=np.uint8)
    before = sys.getrefcount(a)
    buf = cugl.Buffer.from_handle(a.ctypes.data, 100, owner=a)
    view = cugl.StridedMemoryView.from_buffer(buf, (10, 10), dtype=np.uint8)
    exported = np.from_dlpack(view[::2])
    assert _dlpack.held_count() == 1
    del buf, view
    gc.collect()
    assert _dlpack.held_count() == 1  # the NumPy array reaches the memory through cugl
    del exported
    gc.collect()
    assert _dlpack.held_count() == 0 and sys.getrefcount(a) == before


def test_deleters_run_once_across_threads():
    import threading
    p = Producer(np.zeros((4, 4), np.float32))
    views = [cugl.from_dlpack(p) for _ in range(64)]

    def drop(chunk):
        for v in chunk:
            v.close()

    threads = [threading.Thread(target=drop, args=(views[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    del views
    gc.collect()
    assert p.made == 64 and p.deleted == 64
