"""cugl's failures as Python exceptions: the class of the status, libcugl's
message, per thread; and what happens without a driver."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import cugl
from cugl import _errors, _lib


def test_status_table_matches_the_library():
    lib_names = {}
    value = 0
    while True:
        name = _lib.status_name(value)
        if name == "CUGL_STATUS_UNKNOWN":
            break
        lib_names[value] = name
        value += 1
    assert lib_names[0] == "CUGL_OK"
    ours = {value: name for name, value, _ in _errors.STATUSES}
    assert ours == {v: n for v, n in lib_names.items() if v != 0}
    for name, value, cls in _errors.STATUSES:
        assert cls.status == value and cls.status_name == name
        assert issubclass(cls, cugl.CuglError)


@pytest.mark.parametrize("cls, builtin", [
    (cugl.InvalidArgumentError, ValueError),
    (cugl.OutOfMemoryError, MemoryError),
    (cugl.ClosedError, RuntimeError),
    (cugl.InvalidStateError, RuntimeError),
    (cugl.NotSupportedError, RuntimeError),
    (cugl.NoDriverError, RuntimeError),
    (cugl.NoDeviceError, RuntimeError),
    (cugl.NotReadyError, RuntimeError),
    (cugl.CUDAError, RuntimeError),
    (cugl.GLError, RuntimeError),
    (cugl.LibraryNotFoundError, OSError),
])
def test_classes_are_also_the_builtin_a_caller_expects(cls, builtin):
    assert issubclass(cls, builtin) and issubclass(cls, cugl.CuglError)


def host_buffer(array):
    return cugl.Buffer.from_handle(array.ctypes.data, array.nbytes)


def test_an_invalid_argument_raises_with_cugls_message():
    a = np.zeros(10, np.float32)
    buf = host_buffer(a)
    with pytest.raises(cugl.InvalidArgumentError) as e:
        cugl.StridedMemoryView.from_buffer(buf, (11,), dtype=np.float32)
    msg = "cugl_view_from_buffer: the layout needs 44 bytes but the buffer has 40"
    assert str(e.value) == msg and e.value.message == msg
    assert e.value.status == 1 and e.value.status_name == "CUGL_ERROR_INVALID_ARGUMENT"
    assert e.value.cuda_result == 0
    assert cugl.last_error() == msg


@pytest.mark.parametrize("build, message", [
    (lambda v: v.reshape((7,)),
     "cugl_layout_reshaped: cannot reshape 12 elements into a shape of 7"),
    (lambda v: v[3],
     "cugl_layout_sliced: index 3 is out of range for axis 0 of extent 3"),
    (lambda v: v[:, ::0], "cugl_layout_sliced: slice 1: the step cannot be zero"),
    (lambda v: v.transpose((0, 0)), "cugl_layout_permuted: axes repeats axis 0"),
])
def test_layout_refusals_carry_cugls_messages(build, message):
    view = cugl.from_dlpack(np.zeros((3, 4), np.int16))
    with pytest.raises(cugl.InvalidArgumentError) as e:
        build(view)
    assert str(e.value) == message


def test_negative_extent_names_the_axis():
    buf = host_buffer(np.zeros(4, np.uint8))
    with pytest.raises(cugl.InvalidArgumentError) as e:
        cugl.StridedMemoryView.from_buffer(buf, (2, -1), itemsize=1)
    assert str(e.value) == "cugl_layout_init: shape[1] is -1; extents must be non-negative"


@pytest.mark.parametrize("kwargs, message", [
    (dict(shape=(4, 4), format="float32", num_channels=3),
     "num_channels 3 is not supported: arrays have 1, 2 or 4 channels (store RGB as 4 "
     "channels)"),
    (dict(shape=(4, 0), format="uint8"), "shape[1] is 0; each of the 2 extents must be >= 1"),
    (dict(shape=(4, 5), format="uint8", cubemap=True),
     "a cube map's faces are square, but the shape is 4x5"),
    (dict(shape=(2, 2, 2), format="int16", layers=3),
     "layers is 3 but ndim is 3; a layered array is a stack of 1D or 2D images"),
])
def test_array_descriptors_are_checked_before_any_device(kwargs, message):
    with pytest.raises(cugl.InvalidArgumentError) as e:
        cugl.CUDAArray.from_descriptor(**kwargs)
    assert str(e.value) == "cugl_array_desc_validate: " + message


def test_an_unknown_format_lists_the_formats():
    with pytest.raises(ValueError) as e:
        cugl.CUDAArray.from_descriptor(shape=(4,), format="float64")
    assert "float64" in str(e.value)
    for name in ("uint8", "uint16", "uint32", "int8", "int16", "int32", "float16",
                 "float32"):
        assert name in str(e.value)


def test_a_closed_buffer_answers_closed():
    a = np.arange(8, dtype=np.uint8)
    buf = host_buffer(a)
    assert buf.handle == a.ctypes.data and buf.size == 8 and not buf.is_closed
    buf.close()
    buf.close()  # idempotent
    assert buf.is_closed and buf.handle == 0 and buf.size == 0
    with pytest.raises(cugl.ClosedError) as e:
        cugl.StridedMemoryView.from_buffer(buf, (8,), dtype=np.uint8)
    assert str(e.value) == "cugl_view_from_buffer: the buffer has been closed"
    with pytest.raises(cugl.ClosedError) as e:
        buf.__dlpack__()
    assert str(e.value) == "cugl_buffer_to_dlpack: the buffer has been closed"


def test_a_view_of_a_closed_buffer_answers_closed():
    a = np.arange(8, dtype=np.uint8)
    buf = host_buffer(a)
    view = cugl.StridedMemoryView.from_buffer(buf, (8,), dtype=np.uint8)
    buf.close()
    with pytest.raises(cugl.ClosedError) as e:
        view.copy_from(np.zeros(8, np.uint8))
    assert str(e.value) == "cugl_view_copy_from: the buffer of dst has been closed"


def test_a_closed_view_raises_closed():
    view = cugl.from_dlpack(np.zeros(3))
    view.close()
    assert view.is_closed
    with pytest.raises(cugl.ClosedError) as e:
        view.shape
    assert "closed" in str(e.value)


def test_each_thread_reads_its_own_message():
    failures = []

    def fail_many(n):
        a = np.zeros(n, np.uint8)
        buf = host_buffer(a)
        for _ in range(300):
            try:
                cugl.StridedMemoryView.from_buffer(buf, (n + 1,), itemsize=1)
            except cugl.InvalidArgumentError as e:
                want = ("cugl_view_from_buffer: the layout needs %d bytes but the buffer "
                        "has %d" % (n + 1, n))
                if str(e) != want:
                    failures.append(str(e))
            else:
                failures.append("no error")

    threads = [threading.Thread(target=fail_many, args=(10 + i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


# Without a usable driver every call that needs one raises NoDriverError with
# cugl's reason, as the C suite's unit-nodriver tests check. Run in a child
# process pointed at a driver that cannot work (CUGL_LIBCUDA), so this holds
# on a GPU machine too.
NODRIVER_PROGRAM = r"""
import sys, cugl
for call, name in [(cugl.Device, "cugl_device_get_current"),
                   (lambda: cugl.Device(0), "cugl_device_get"),
                   (cugl.device_count, "cugl_device_count"),
                   (cugl.driver_version, "cugl_driver_version"),
                   (lambda: cugl.Stream.from_handle(1), "cugl_stream_from_handle")]:
    for attempt in range(2):
        try:
            call()
        except cugl.NoDriverError as e:
            assert e.status == 6 and e.status_name == "CUGL_ERROR_NO_DRIVER", e
            assert str(e).startswith(name + ": "), (name, str(e))
            print(str(e))
        else:
            sys.exit("%s raised nothing" % name)
"""


@pytest.mark.parametrize("libcuda, reason", [
    ("/nonexistent/libcuda.so.1",
     "no CUDA driver: cannot load /nonexistent/libcuda.so.1 (/nonexistent/libcuda.so.1: "
     "cannot open shared object file: No such file or directory); install the NVIDIA driver"),
    ("libc.so.6", "has no cuGetProcAddress"),
])
def test_without_a_driver_every_entry_point_raises_no_driver(libcuda, reason):
    env = dict(os.environ, CUGL_LIBCUDA=libcuda)
    out = subprocess.run([sys.executable, "-c", NODRIVER_PROGRAM], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 10
    for line in lines:
        assert reason in line, line
