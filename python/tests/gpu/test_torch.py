"""PyTorch CUDA tensors and cugl, both ways, without copies: DLPack 1.x and
0.x, the CUDA array interface, the producer's stream honoured, deleters
called once, nothing leaked."""
import gc

import numpy as np
import pytest

import cugl

SLEEP_CYCLES = 300_000_000  # torch.cuda._sleep: well over 100 ms on any GPU


class OldProducer:
    """A DLPack 0.x producer: __dlpack__ without max_version."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)


class CAIv3:
    """A tensor's __cuda_array_interface__ as version 3, with the stream
    that writes it."""

    def __init__(self, t, stream):
        self.t = t
        cai = dict(t.__cuda_array_interface__)
        cai["version"] = 3
        cai["stream"] = stream
        self.__cuda_array_interface__ = cai


def to_host(view, stream):
    out = np.empty(view.shape, view.dtype)
    view.copy_to(out, stream)
    return out


def expect_same(view, t):
    assert view.ptr == t.data_ptr()
    assert view.shape == tuple(t.shape)
    assert view.strides == tuple(t.stride())
    assert view.itemsize == t.element_size()
    assert view.device_id == t.device.index
    assert view.is_device_accessible and not view.is_host_accessible


@pytest.mark.parametrize("producer", ["versioned", "0.x"])
def test_torch_to_cugl_to_torch_shares_memory(torch, device, stream, producer):
    t = torch.arange(4 * 6 * 5, dtype=torch.float32, device="cuda").reshape(4, 6, 5)
    t = t.transpose(0, 2)[:, 1::2]  # not contiguous
    view = cugl.from_dlpack(t if producer == "versioned" else OldProducer(t), stream=stream)
    expect_same(view, t)
    np.testing.assert_array_equal(to_host(view, stream), t.cpu().numpy())
    back = torch.from_dlpack(view)
    assert back.data_ptr() == t.data_ptr() and back.stride() == t.stride()
    assert back.device == t.device and torch.equal(back, t)
    back.mul_(2)  # in place: the same memory
    torch.cuda.synchronize()
    assert torch.equal(back, t)


@pytest.mark.parametrize("dtype, dlpack", [
    ("float16", (2, 16, 1)), ("float32", (2, 32, 1)), ("float64", (2, 64, 1)),
    ("bfloat16", (4, 16, 1)), ("int8", (0, 8, 1)), ("int32", (0, 32, 1)),
    ("int64", (0, 64, 1)), ("uint8", (1, 8, 1)), ("complex64", (5, 64, 1))])
def test_torch_dtypes(torch, stream, dtype, dlpack):
    t = torch.ones(3, 7, device="cuda").to(getattr(torch, dtype))
    view = cugl.from_dlpack(t, stream=stream)
    assert view.dlpack_dtype == dlpack
    expect_same(view, t)
    back = torch.from_dlpack(view)
    assert back.dtype == t.dtype and back.data_ptr() == t.data_ptr()


def test_cugl_buffers_become_torch_tensors(torch, device, stream):
    buf = device.memory_resource.allocate(4096, stream=stream)
    buf.fill(7, stream=stream)
    t = torch.from_dlpack(buf)
    assert t.dtype == torch.uint8 and t.numel() == 4096 and t.data_ptr() == buf.handle
    assert bool((t == 7).all())
    view = cugl.StridedMemoryView.from_buffer(buf, (32, 32), dtype=np.float32)
    f = torch.from_dlpack(view)
    f.fill_(1.5)  # torch writes cugl's memory in place
    torch.cuda.synchronize()
    assert (to_host(view, stream) == 1.5).all()
    del t, f
    buf.close()


def test_the_producers_stream_is_waited_for_on_import(torch, device, stream):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.zeros(1 << 20, device="cuda")
        torch.cuda._sleep(SLEEP_CYCLES)
        t.fill_(3.0)
        # torch orders its current stream (side) before the consumer's stream.
        view = cugl.from_dlpack(t, stream=stream)
    assert (to_host(view, stream) == 3.0).all()
    side.synchronize()


def test_the_cuda_array_interface_stream_is_waited_for(torch, device, stream):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.zeros(1 << 20, device="cuda")
        torch.cuda._sleep(SLEEP_CYCLES)
        t.fill_(5.0)
    view = cugl.StridedMemoryView.from_cuda_array_interface(CAIv3(t, side.cuda_stream),
                                                             stream=stream)
    assert cugl.Stream.from_handle(side).handle == side.cuda_stream  # torch's streams too
    assert view.ptr == t.data_ptr()
    assert (to_host(view, stream) == 5.0).all()
    side.synchronize()


def test_the_exporters_stream_is_waited_for_by_torch(torch, device, stream):
    buf = device.memory_resource.allocate(4 << 20, stream=stream)
    view = cugl.StridedMemoryView.from_buffer(buf, (1 << 20,), dtype=np.float32)
    with torch.cuda.stream(torch.cuda.ExternalStream(stream.handle)):
        torch.cuda._sleep(SLEEP_CYCLES)
    buf.fill(np.float32(4.0), stream=stream)  # after the sleep, on cugl's stream
    t = torch.from_dlpack(view)  # torch's current stream waits for `stream`
    assert bool((t == 4.0).all())
    stream.sync()
    del t
    buf.close()


def test_cuda_array_interface_import(torch, device, stream):
    t = torch.arange(60, dtype=torch.int32, device="cuda").reshape(6, 10)[1:, ::3]
    view = cugl.StridedMemoryView.from_cuda_array_interface(t, stream=stream)
    expect_same(view, t)
    assert view.exporting_obj is t
    np.testing.assert_array_equal(to_host(view, stream), t.cpu().numpy())
    again = cugl.from_dlpack(CAIv3(t, None), stream=stream)  # no __dlpack__: the interface
    expect_same(again, t)


def test_torch_memory_is_held_until_the_last_cugl_object_goes(torch, device, stream):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    t = torch.empty(16 << 20, dtype=torch.uint8, device="cuda")
    view = cugl.from_dlpack(t, stream=stream)[::2]
    del t
    gc.collect()
    assert torch.cuda.memory_allocated() >= base + (16 << 20)  # the view holds it
    view.close()
    gc.collect()
    assert torch.cuda.memory_allocated() == base  # the deleter ran


def test_cugl_objects_are_held_by_torch_until_it_lets_go(torch, device, stream, live):
    objects = live[0]
    buf = device.memory_resource.allocate(1 << 20, stream=stream)
    view = cugl.StridedMemoryView.from_buffer(buf, (1 << 18,), dtype=np.float32)
    t = torch.from_dlpack(view)
    del view, buf
    gc.collect()
    assert cugl.live_objects() > objects
    t.fill_(1)
    del t
    torch.cuda.synchronize()
    gc.collect()
    assert cugl.live_objects() == objects


def test_round_trips_leave_nothing_behind(torch, device, stream, live):
    t = torch.zeros(64, 64, device="cuda")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    for _ in range(10_000):
        view = cugl.from_dlpack(t, stream=stream)
        back = torch.from_dlpack(view[::2, 1:])
        assert back.data_ptr() == t.data_ptr() + 4
    del view, back
    torch.cuda.synchronize()
    gc.collect()
    assert torch.cuda.memory_allocated() == base
