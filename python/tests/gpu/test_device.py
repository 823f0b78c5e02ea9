"""Devices, streams and events on a CUDA device (skipped without one)."""
import pytest

import cugl


def test_devices_are_one_object_each(device):
    assert cugl.Device(0) is device and cugl.Device() is device
    assert device.device_id == 0 and device.is_initialized
    assert cugl.device_count() >= 1
    assert [d.device_id for d in cugl.Device.get_all_devices()] == list(
        range(cugl.device_count()))
    assert cugl.driver_version() >= 12000
    assert device.context_handle != 0


def test_an_ordinal_past_the_last_is_refused(device):
    n = cugl.device_count()
    with pytest.raises(cugl.InvalidArgumentError) as e:
        cugl.Device(n)
    assert str(e.value) == "cugl_device_get: device ordinal %d is out of range: %d %s present" % (
        n, n, "device is" if n == 1 else "devices are")


def test_properties(device):
    p = device.properties
    assert p.name and p.name == device.name
    assert device.compute_capability == (p.compute_capability_major,
                                         p.compute_capability_minor)
    assert device.arch == "%d%d" % device.compute_capability
    assert p.warp_size == 32 and p.multiprocessor_count > 0
    assert len(p.max_block_dim) == 3 and len(p.uuid) == 16
    assert len(device.uuid) == 36 and device.pci_bus_id.count(":") == 2
    free, total = device.memory_info()
    assert 0 < free <= total == p.total_memory
    with pytest.raises(AttributeError):
        p.name = "x"


def test_properties_match_torch(device, torch):
    t = torch.cuda.get_device_properties(0)
    assert device.name == t.name
    assert device.compute_capability == (t.major, t.minor)
    assert device.properties.total_memory == t.total_memory
    assert device.properties.multiprocessor_count == t.multi_processor_count


def test_streams(device):
    p = device.properties
    s = device.create_stream()
    assert s.is_nonblocking and s.priority == 0 and s.device is device
    assert s.handle not in (0, 1, 2) and s.__cuda_stream__() == (0, s.handle)
    s.sync()
    assert s.is_done
    hi = device.create_stream(options=cugl.StreamOptions(nonblocking=False,
                                                         priority=p.stream_priority_greatest))
    assert not hi.is_nonblocking and hi.priority == p.stream_priority_greatest
    bad = p.stream_priority_greatest - 1
    with pytest.raises(cugl.InvalidArgumentError) as e:
        device.create_stream(options=cugl.StreamOptions(priority=bad))
    assert str(e.value) == ("cugl_stream_create: priority %d is outside the device's range "
                            "[%d, %d] (lower is higher priority)"
                            % (bad, p.stream_priority_greatest, p.stream_priority_least))
    wrapped = cugl.Stream.from_handle(s)
    assert wrapped.handle == s.handle and wrapped.device is device
    assert device.create_stream(s).handle == s.handle
    assert device.default_stream.handle == 1
    s.wait(hi)
    s.close()
    s.close()
    assert s.is_closed and s.handle == 0
    with pytest.raises(cugl.ClosedError) as e:
        s.sync()
    assert str(e.value) == "cugl_stream_sync: the stream has been closed"
    wrapped.close()  # forgets the (already destroyed) handle; destroys nothing


def test_events_time_work(device, stream):
    buf = device.memory_resource.allocate(64 << 20, stream=stream)
    start = stream.record(options=cugl.EventOptions(timing_enabled=True))
    for _ in range(10):
        buf.fill(7, stream=stream)
    end = stream.record(options=cugl.EventOptions(timing_enabled=True))
    end.sync()
    assert start.is_done and end.is_done and end.is_timing_enabled
    ms = end - start
    assert ms > 0
    plain = stream.record()
    assert not plain.is_timing_enabled
    stream.wait(plain)
    with pytest.raises(cugl.InvalidStateError):
        end - plain  # timing disabled on one
    buf.close()
    for e in (start, end, plain):
        e.close()
        assert e.is_closed and e.handle == 0


def test_ipc_events_cannot_time(device):
    with pytest.raises(cugl.InvalidArgumentError) as e:
        device.create_event(cugl.EventOptions(timing_enabled=True, ipc_enabled=True))
    assert str(e.value).startswith("cugl_event_create: ")


def test_stream_objects_leave_nothing_behind(device, live):
    for _ in range(10_000):
        s = device.create_stream()
        e = s.record()
        s.wait(e)
        s.close()
    del s, e
