"""GL buffers and textures written and read by CUDA through
GraphicsResource, read back through GL and compared exactly. Needs a CUDA
device and NVIDIA's EGL on it (skipped otherwise)."""
import gc

import numpy as np
import pytest

import cugl

from gl_context import GLContext, NoContext


@pytest.fixture
def gl(device):
    try:
        ctx = GLContext(device.device_id)
    except NoContext as e:
        pytest.skip(str(e))
    yield ctx
    ctx.close()


def test_cuda_writes_a_gl_buffer(device, stream, gl):
    n = 1024
    name = gl.buffer(n * 4)
    data = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    with cugl.GraphicsResource.from_gl_buffer(name, flags="write_discard") as res:
        assert res.is_buffer and res.gl_name == name and res.gl_target == 0
        assert res.flags == 2 and res.device is device and res.handle != 0
        assert not res.is_mapped
        with res.map(stream=stream) as buf:
            assert res.is_mapped
            assert buf.size == n * 4 and buf.is_device_accessible and buf.memory_resource is None
            view = cugl.StridedMemoryView.from_buffer(buf, (n,), dtype=np.float32)
            view.copy_from(data, stream)
            with pytest.raises(cugl.InvalidStateError) as e:
                res.map(stream=stream)
            assert str(e.value) == ("cugl_graphics_resource_map: resources[0] (GL buffer %d) "
                                    "is already mapped; unmap it first" % name)
        assert not res.is_mapped and buf.is_closed and buf.handle == 0
        with pytest.raises(cugl.InvalidStateError) as e:
            res.unmap()
        assert str(e.value) == "cugl_graphics_resource_unmap: GL buffer %d is not mapped" % name
    assert res.is_closed and res.handle == 0
    np.testing.assert_array_equal(gl.read_buffer(name, np.zeros(n, np.float32)), data)
    gl.delete(buffers=[name])


def test_with_a_stream_the_block_gets_the_mapped_buffer(device, stream, gl):
    name = gl.buffer(4096)
    with cugl.GraphicsResource.from_gl_buffer(name, stream=stream) as buf:
        assert isinstance(buf, cugl.Buffer) and buf.size == 4096
        buf.fill(np.float32(1.0), stream=stream)
    assert buf.is_closed
    assert (gl.read_buffer(name, np.zeros(1024, np.float32)) == 1.0).all()
    gl.delete(buffers=[name])


def test_cuda_reads_what_gl_wrote(device, stream, gl):
    data = np.arange(256, dtype=np.int32)
    name = gl.buffer(data.nbytes)
    gl.glNamedBufferSubData(name, 0, data.nbytes, data.ctypes.data)
    res = cugl.GraphicsResource.from_gl_buffer(name, flags="read_only")
    buf = res.map(stream=stream)
    out = np.zeros_like(data)
    cugl.StridedMemoryView.from_buffer(buf, data.shape, dtype=np.int32).copy_to(out, stream)
    np.testing.assert_array_equal(out, data)
    res.unmap(stream=stream)
    assert buf.is_closed
    res.map_flags = "write_discard"
    assert res.map_flags == "write_discard"
    res.close()
    res.close()
    gl.delete(buffers=[name])


def test_cuda_writes_a_gl_texture(device, stream, gl):
    width, height = 16, 8
    name = gl.texture_rgba32f(width, height)
    img = np.random.default_rng(2).standard_normal((height, width, 4)).astype(np.float32)
    with cugl.GraphicsResource.from_gl_image(name, cugl.GL_TEXTURE_2D,
                                             flags=["surface_load_store"]) as res:
        assert not res.is_buffer and res.gl_target == cugl.GL_TEXTURE_2D
        with res.map_array(stream=stream) as arr:
            assert arr.shape == (width, height) and arr.format == "float32"
            assert arr.num_channels == 4 and arr.is_surface_load_store
            arr.copy_from(img, stream=stream)
            back = np.zeros_like(img)
            arr.copy_to(back, stream=stream)
            np.testing.assert_array_equal(back, img)
        assert arr.is_closed and not res.is_mapped
    np.testing.assert_array_equal(gl.read_texture(name, np.zeros_like(img)), img)
    gl.delete(textures=[name])


def test_an_image_is_not_mapped_as_a_buffer(device, stream, gl):
    name = gl.texture_rgba32f(4, 4)
    with cugl.GraphicsResource.from_gl_image(name, cugl.GL_TEXTURE_2D) as res:
        with pytest.raises(cugl.InvalidArgumentError):
            res.map(stream=stream)
        assert not res.is_mapped
    gl.delete(textures=[name])


def test_unknown_flags_are_refused(device, gl):
    with pytest.raises(ValueError) as e:
        cugl.GraphicsResource.from_gl_buffer(1, flags="sometimes")
    assert str(e.value).startswith("Unknown register flag 'sometimes'. Valid flags: none, ")


def test_torch_writes_a_gl_buffer_in_place(device, stream, gl, torch):
    n = 4096
    name = gl.buffer(n * 4)
    with cugl.GraphicsResource.from_gl_buffer(name) as res:
        with res.map(stream=stream) as buf:
            view = cugl.StridedMemoryView.from_buffer(buf, (64, 64), dtype=np.float32)
            t = torch.from_dlpack(view)  # the GL buffer's memory, as a tensor
            assert t.data_ptr() == buf.handle
            t.copy_(torch.arange(n, dtype=torch.float32, device="cuda").reshape(64, 64))
            torch.cuda.synchronize()
            del t
    np.testing.assert_array_equal(gl.read_buffer(name, np.zeros(n, np.float32)),
                                  np.arange(n, dtype=np.float32))
    gl.delete(buffers=[name])


def test_map_cycles_leave_nothing_behind(device, stream, gl, live):
    name = gl.buffer(1 << 16)
    res = cugl.GraphicsResource.from_gl_buffer(name)
    for i in range(1000):
        with res.map(stream=stream) as buf:
            buf.fill(i % 256, stream=stream)
    res.close()
    del res, buf
    gc.collect()
    stream.sync()
    assert (gl.read_buffer(name, np.zeros(1 << 16, np.uint8)) == 999 % 256).all()
    gl.delete(buffers=[name])
