"""Memory resources, buffers and CUDA arrays on a CUDA device: values read
back through cugl's copies, live bytes counted."""
import ctypes
import gc

import numpy as np
import pytest

import cugl


def read(buf, stream, dtype=np.uint8):
    """The buffer's bytes, through a device-to-host view copy."""
    n = buf.size // np.dtype(dtype).itemsize
    out = np.empty(n, dtype)
    cugl.StridedMemoryView.from_buffer(buf, (n,), dtype=dtype).copy_to(out, stream)
    return out


def host_array(buf, dtype=np.uint8):
    """The buffer's memory seen directly by the host (pinned or managed)."""
    raw = (ctypes.c_uint8 * buf.size).from_address(buf.handle)
    return np.frombuffer(raw, dtype)


def test_device_memory(device, stream, live):
    objects, nbytes = live
    mr = device.memory_resource
    assert mr is device.memory_resource and mr.kind == "device"
    assert mr.is_device_accessible and not mr.is_host_accessible and mr.is_stream_ordered
    buf = mr.allocate(1 << 20, stream=stream)
    assert cugl.live_bytes() == nbytes + (1 << 20)
    assert buf.size == 1 << 20 and buf.device_id == 0 and buf.handle != 0
    assert buf.is_device_accessible and not buf.is_host_accessible and not buf.is_managed
    assert buf.memory_resource is mr and buf.__dlpack_device__() == (2, 0)
    buf.fill(0xAB, stream=stream)
    assert (read(buf, stream) == 0xAB).all()
    buf.fill(np.uint16(0x1234), stream=stream)
    assert (read(buf, stream, np.uint16) == 0x1234).all()
    buf.fill(np.float32(2.5), stream=stream)
    assert (read(buf, stream, np.float32) == 2.5).all()
    copy = buf.copy_to(stream=stream)
    assert copy.size == buf.size and copy.handle != buf.handle
    assert (read(copy, stream, np.float32) == 2.5).all()
    buf.fill(1, stream=stream)
    copy.copy_from(buf, stream=stream)
    assert (read(copy, stream) == 1).all()
    with pytest.raises(cugl.InvalidArgumentError) as e:
        buf.fill(b"abc", stream=stream)
    assert str(e.value) == ("cugl_buffer_fill: value_size is 3; the pattern must be 1, 2 or "
                            "4 bytes")
    buf.close()
    copy.close()
    assert buf.is_closed and buf.size == 0 and buf.memory_resource is None
    del buf, copy
    gc.collect()
    assert cugl.live_bytes() == nbytes


def test_device_allocate_uses_the_default_stream(device):
    buf = device.allocate(4096)
    buf.fill(3, stream=device.default_stream)
    assert (read(buf, device.default_stream) == 3).all()
    buf.close()


def test_a_pool_of_its_own(device, stream):
    mr = cugl.DeviceMemoryResource(device, cugl.DeviceMemoryResourceOptions(max_size=64 << 20))
    buf = mr.allocate(1 << 20, stream=stream)
    stats = mr.pool_stats
    assert stats.used_current >= 1 << 20 and stats.reserved_current >= 1 << 20
    assert mr.handle != 0
    buf.close(stream)
    stream.sync()
    assert mr.pool_stats.used_current == 0
    mr.trim()
    mr.close()
    with pytest.raises(cugl.ClosedError):
        mr.allocate(16, stream=stream)


def test_pinned_memory_is_seen_by_host_and_device(device, stream):
    mr = cugl.PinnedMemoryResource(device)
    buf = mr.allocate(4096, stream=stream)
    assert buf.is_host_accessible and buf.is_device_accessible
    assert buf.__dlpack_device__() == (3, 0)
    buf.fill(np.uint32(0xDEADBEEF), stream=stream)
    stream.sync()
    assert (host_array(buf, np.uint32) == 0xDEADBEEF).all()
    buf.close()


def test_managed_memory(device, stream):
    if not device.properties.managed_memory:
        pytest.skip("the device has no managed memory")
    mr = cugl.ManagedMemoryResource(device, cugl.ManagedMemoryResourceOptions("device"))
    buf = mr.allocate(4096, stream=stream)
    assert buf.is_managed and buf.__dlpack_device__() == (13, 0)
    buf.fill(9, stream=stream)
    stream.sync()
    assert (host_array(buf) == 9).all()
    buf.close()


def test_legacy_pinned_memory_needs_no_stream(device):
    mr = cugl.LegacyPinnedMemoryResource(device)
    assert not mr.is_stream_ordered
    buf = mr.allocate(256)
    host_array(buf)[:] = 5
    assert (host_array(buf) == 5).all()
    buf.close()


def test_stream_ordered_memory_needs_a_stream(device):
    with pytest.raises(cugl.InvalidArgumentError) as e:
        device.memory_resource.allocate(16)
    assert str(e.value).startswith("cugl_memory_resource_allocate: ")


def test_buffers_over_foreign_device_pointers(device, stream):
    owner = device.memory_resource.allocate(1024, stream=stream)
    owner.fill(4, stream=stream)
    alias = cugl.Buffer.from_handle(owner.handle, 1024)
    assert alias.device_id == 0 and alias.is_device_accessible and alias.memory_resource is None
    assert (read(alias, stream) == 4).all()
    alias.close()  # forgets the pointer only
    assert (read(owner, stream) == 4).all()
    owner.close()


def test_cuda_arrays_round_trip(device, stream):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((32, 64, 4)).astype(np.float32)  # height, width, channels
    with cugl.CUDAArray.from_descriptor(shape=(64, 32), format=np.float32, num_channels=4,
                                        is_surface_load_store=True) as arr:
        assert arr.shape == (64, 32) and arr.ndim == 2 and arr.format == "float32"
        assert arr.num_channels == 4 and arr.element_bytes == 16
        assert arr.size_bytes == data.nbytes and arr.is_surface_load_store
        assert arr.device is device and arr.handle != 0
        arr.copy_from(data, stream=stream)
        out = np.zeros_like(data)
        assert arr.copy_to(out, stream=stream) is out
        np.testing.assert_array_equal(out, data)
        buf = device.memory_resource.allocate(data.nbytes, stream=stream)
        arr.copy_to(buf, stream=stream)
        np.testing.assert_array_equal(read(buf, stream, np.float32).reshape(data.shape), data)
        buf.fill(0, stream=stream)
        arr.copy_from(buf, stream=stream)
        arr.copy_to(out, stream=stream)
        assert (out == 0).all()
        with pytest.raises(cugl.InvalidArgumentError) as e:
            arr.copy_from(data[:16], stream=stream)
        assert str(e.value) == ("cugl_array_copy_from_host: source has %d bytes, smaller "
                                "than the array extent (%d bytes)"
                                % (data.nbytes // 2, data.nbytes))
        buf.close()
    assert arr.is_closed and arr.handle == 0


def test_allocations_leave_nothing_behind(device, stream, live):
    mr = device.memory_resource
    for _ in range(10_000):
        buf = mr.allocate(4096, stream=stream)
        view = cugl.StridedMemoryView.from_buffer(buf, (1024,), dtype=np.float32)
        capsule = view.__dlpack__(max_version=(1, 0), stream=-1)
        del capsule, view
        buf.close()
    del buf
    stream.sync()
