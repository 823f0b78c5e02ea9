"""10,000 create-and-release cycles of each host path leave cugl's live
objects and bytes (device.h's counts), the package's held tensors and
pending exports, and the NumPy array's references where they were."""
import gc
import sys

import numpy as np
import pytest

import cugl
from cugl import _dlpack

from dlpack_producer import Producer, consume

CYCLES = 10_000


def dlpack_round_trip(a):
    view = cugl.from_dlpack(a)
    back = np.from_dlpack(view[1:, ::2])
    assert back.ctypes.data == a.ctypes.data + a.strides[0]


def buffer_with_owner(a):
    buf = cugl.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    view = cugl.StridedMemoryView.from_buffer(buf, a.shape, dtype=a.dtype)
    capsule = view.__dlpack__(max_version=(1, 0))  # dropped unconsumed
    del capsule
    buf.close()


def array_interface(a):
    ro = a[::-1]
    ro.flags.writeable = False  # NumPy 1.x's DLPack refuses it: the array interface takes it
    view = cugl.StridedMemoryView(ro)
    assert view.readonly and view.ptr == ro.ctypes.data


def consumed_export(a):
    view = cugl.from_dlpack(a).T
    address, versioned, t = consume(view.__dlpack__(max_version=(1, 0)))
    t.deleter(address)


def host_copy(a):
    out = np.empty_like(a)
    cugl.from_dlpack(out).copy_from(a.T.T)
    assert out[2, 3] == a[2, 3]


def refused_import(a):
    with pytest.raises(cugl.InvalidArgumentError):
        cugl.StridedMemoryView.from_buffer(cugl.Buffer.from_handle(a.ctypes.data, 8),
                                           (100,), itemsize=1)


@pytest.mark.parametrize("cycle", [dlpack_round_trip, buffer_with_owner, array_interface,
                                   consumed_export, host_copy, refused_import],
                         ids=lambda f: f.__name__)
def test_cycles_leave_nothing_behind(cycle):
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    cycle(a)  # warm up: anything made once and kept is not a leak
    gc.collect()
    before = (cugl.live_objects(), cugl.live_bytes(), _dlpack.held_count(),
              _dlpack.exports_count(), sys.getrefcount(a))
    for _ in range(CYCLES):
        cycle(a)
    gc.collect()
    after = (cugl.live_objects(), cugl.live_bytes(), _dlpack.held_count(),
             _dlpack.exports_count(), sys.getrefcount(a))
    assert after == before


def test_producer_deleters_over_many_cycles():
    p = Producer(np.zeros((4, 4), np.int32))
    for _ in range(CYCLES):
        view = cugl.from_dlpack(p)
        np.from_dlpack(view[::2])
    del view
    gc.collect()
    assert p.made == CYCLES and p.deleted == CYCLES
