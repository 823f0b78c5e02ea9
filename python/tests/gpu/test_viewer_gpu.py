"""cugl.Viewer on a CUDA device with PyTorch, on every interop path (map,
shared, host): show() of tensors of every dtype and channel count drawn as
the host path draws host memory, points, frame() writing GL's own memory
(its DLPack pointer the target's, no copy made: the driver calls libcugl
makes, logged by the fault shim, do not grow with the frames), show() at
most one copy, an exception inside frame() leaving the viewer usable, no
GIL held while a frame waits for the GPU, tensors on a second GPU, no
growth over many frames, the examples, and the frame-time table at
1920x1080 beside the C example's. Skipped without a device or PyTorch;
CUGL_TEST_NO_SKIP=1 makes that a failure."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import cugl
from cugl import _app_lib

PATHS = ["map", "shared", "host"]
W, H = 50, 30  # rows of 200 bytes: a pitch of its own in the targets' linear memory
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(PYTHON_DIR, "examples")


def viewer_on(path, width=W, height=H, **kwargs):
    """A headless viewer on device 0 taking `path`; skipped only where the
    device has no EGL device (any other refusal fails: every path works on
    the GPU machines)."""
    try:
        return cugl.Viewer(width, height, headless=True, interop=path, **kwargs)
    except cugl.NotSupportedError as e:
        if "no EGL" in str(e):
            pytest.skip(str(e))
        raise


def levels(x):
    return np.rint(np.clip(x.astype(np.float64), 0, 1) * 255).astype(np.int64)


def max_level_difference(a, b):
    return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max())


def tensor(torch, dtype, channels, height=H, width=W, seed=5):
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape = (height, width, channels)
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda", generator=g)
    return (torch.rand(shape, device="cuda", generator=g) * 1.4 - 0.2).to(dtype)


def colour_map_indices_near(got, values):
    """Whether each pixel is the colour map's entry for its value, or the
    next one either way (GL's float32 rounding and NumPy's may part at a tie)."""
    table = np.asarray(cugl.colormap_table(), np.int64)
    if values.dtype == np.uint8:
        index = values.astype(np.int64)
    else:
        t = np.clip(values.astype(np.float32), 0, 1)
        index = (t * np.float32(255) + np.float32(0.5)).astype(np.int64)
    ok = np.zeros(values.shape, bool)
    for d in (-1, 0, 1):
        ok |= (got == table[np.clip(index + d, 0, 255)]).all(axis=2)
    return ok.all()


def test_the_viewer_takes_the_device_and_says_why(torch):
    with cugl.Viewer(W, H, headless=True) as v:
        assert v.device is not None and v.device.device_id == 0
        assert v.stream is not None and v.stream.device.device_id == 0
        assert v.interop in PATHS
        assert len(v.reason) > 20
        print("# auto: %s: %s" % (v.interop, v.reason))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32"])
@pytest.mark.parametrize("channels", [4, 3, 1])
def test_tensors_are_drawn_as_host_memory_is(torch, path, dtype, channels):
    t = tensor(torch, getattr(torch, dtype), channels)
    host = t.cpu().numpy()
    with viewer_on(path) as v:
        assert v.interop == path
        copies = v.copies
        v.show(t)
        assert v.copies == copies + 1  # one copy into a target
        got = v.read_pixels()
    if channels == 4:
        if dtype == "uint8":
            assert np.array_equal(got, host)
        else:
            assert max_level_difference(got, levels(host)) <= 1
    elif channels == 3:
        assert (got[..., 3] == 255).all()
        if dtype == "uint8":
            assert np.array_equal(got[..., :3], host)
        else:
            assert max_level_difference(got[..., :3], levels(host)) <= 1
    else:
        assert colour_map_indices_near(got, host[..., 0])


@pytest.mark.parametrize("path", PATHS)
def test_strided_tensors_and_2d_ones(torch, path):
    base = tensor(torch, torch.uint8, 4, height=2 * H, width=2 * W)
    strided = base[::2, ::2]
    field = torch.linspace(-1, 1, H * W, device="cuda").reshape(H, W)
    with viewer_on(path) as v:
        v.show(strided)
        assert np.array_equal(v.read_pixels(), strided.cpu().numpy())
        v.show(base.permute(1, 0, 2)[:W, :H].permute(1, 0, 2))  # transposed twice: strided
        assert np.array_equal(v.read_pixels(), base[:H, :W].cpu().numpy())
        v.show(field, vmin=-1, vmax=1)
        want = (field.cpu().numpy() + 1) / 2
        assert colour_map_indices_near(v.read_pixels(), want.astype(np.float32))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("channels", [4, 3, 1])
def test_origin_lower_puts_row_zero_at_the_bottom(torch, path, channels):
    """show(origin="lower"): the picture upside down from the default's, on
    every path (4 channels: the image target's blit or, shared, the draw
    from CUDA's memory; 1 and 3: the viewer's GL program)."""
    t = tensor(torch, torch.uint8, channels)
    with viewer_on(path) as v:
        v.show(t)
        upper = v.read_pixels()
        v.show(t, origin="lower")
        lower = v.read_pixels()
    assert np.array_equal(lower, upper[::-1])
    if channels == 4:
        assert np.array_equal(upper, t.cpu().numpy())


@pytest.mark.parametrize("path", PATHS)
def test_points_from_a_tensor(torch, path):
    # On pixel centres, so that each 3 x 3 square covers whole pixels.
    at = [(10, 6), (30, 6), (10, 18), (30, 18)]
    p = torch.zeros(4, 4, device="cuda")
    p[:, :2] = torch.tensor([[(x + 0.5) / 20 - 1, (y + 0.5) / 12 - 1] for x, y in at])
    with viewer_on(path, 40, 24) as v:
        v.show(p, point_size=3)
        px = v.read_pixels()
    assert int((px[..., 0] == 255).sum()) == 4 * 9
    for x, y in at:
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                assert tuple(px[24 - 1 - y - dy, x + dx][:3]) == (255, 255, 255)


@pytest.mark.parametrize("path", PATHS)
def test_mesh_from_tensors(torch, path):
    # A quad by indices, its triangles' scalars 0.5 and 1 (unlit): each
    # pixel inside the colour map's entry, as test_mesh.py checks on Mesa.
    p = torch.tensor([[-0.8, -0.8, 0], [0.8, -0.8, 0], [-0.8, 0.8, 0],
                      [-0.8, 0.8, 0], [0.8, -0.8, 0], [0.8, 0.8, 0]], device="cuda")
    s = torch.tensor([0.5] * 3 + [1.0] * 3, device="cuda")
    i = torch.arange(6, dtype=torch.int32, device="cuda").reshape(2, 3)
    table = np.asarray(cugl.colormap_table(), np.uint8)
    with viewer_on(path) as v:
        v.mesh(p, s, i, shading="none")
        px = v.read_pixels()
    for (x, y), want in (((-0.6, -0.6), table[128]), ((0.6, 0.6), table[255]),
                         ((0.9, -0.9), np.uint8([0, 0, 0, 255]))):
        col, row = int((x * 0.5 + 0.5) * W), int((y * 0.5 + 0.5) * H)
        assert tuple(px[H - 1 - row, col, :3]) == tuple(want[:3]), (path, x, y)


@pytest.mark.parametrize("path", PATHS)
def test_volume_from_a_tensor(torch, path):
    # 1 where x is 0 or 1 (value [z, y, x]), opaque: the map's last entry
    # on the left, the clear colour on the right (test_mesh.py on Mesa).
    v = torch.zeros(4, 4, 4, device="cuda")
    v[:, :, :2] = 1
    table = np.asarray(cugl.colormap_table(), np.uint8)
    with viewer_on(path) as viewer:
        viewer.volume(v, box=((-0.5, -0.5, -0.5), (0.5, 0.5, 0.5)), density=1)
        px = viewer.read_pixels()
    for x, want in ((-0.3, table[255]), (0.3, np.uint8([0, 0, 0, 255]))):
        col, row = int((x * 0.5 + 0.5) * W), int(0.5 * H)
        assert tuple(px[H - 1 - row, col, :3]) == tuple(want[:3]), (path, x)


# --- frame() --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_frame_hands_out_the_targets_own_memory(torch, path):
    pattern = tensor(torch, torch.uint8, 4)
    with viewer_on(path) as v:
        copies = v.copies
        with v.frame() as img:
            out = torch.from_dlpack(img)
            ptr, pitch, size = v._frame_access[1]
            assert out.data_ptr() == ptr  # the target's memory, not a copy of it
            assert out.shape == (H, W, 4) and out.dtype == torch.uint8
            assert out.stride() == ((4 * W if path == "map" else pitch), 4, 1)
            out.copy_(pattern)
        assert v.copies == copies  # frame() made no copy into a target
        assert np.array_equal(v.read_pixels(), pattern.cpu().numpy()[::-1])
        # And again, on another stream of PyTorch's: the viewer waits for it.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())  # pattern is ready there
        with torch.cuda.stream(side):
            with v.frame() as img:
                torch.from_dlpack(img).copy_(pattern.flip(0))
        assert np.array_equal(v.read_pixels(), pattern.cpu().numpy())


@pytest.mark.parametrize("path", PATHS)
def test_an_exception_inside_frame_leaves_the_viewer_usable(torch, path):
    pattern = tensor(torch, torch.uint8, 4, seed=9)
    with viewer_on(path) as v:
        v.show(pattern)
        presented = v.frame_number
        with pytest.raises(KeyError):
            with v.frame() as img:
                torch.from_dlpack(img).fill_(7)
                raise KeyError("the simulation failed")
        assert v.frame_number == presented  # the turn ended, nothing presented
        with v.frame() as img:
            torch.from_dlpack(img).copy_(pattern.flip(0))
        assert np.array_equal(v.read_pixels(), pattern.cpu().numpy())
        v.show(pattern)  # row 0 at the top: read_pixels' first row
        assert np.array_equal(v.read_pixels(), pattern.cpu().numpy())
        with pytest.raises(cugl.InvalidStateError, match="a frame\\(\\) turn is open"):
            with v.frame():
                v.show(pattern)
        with v.frame() as img:
            torch.from_dlpack(img).copy_(pattern)
        assert np.array_equal(v.read_pixels(), pattern.cpu().numpy()[::-1])


def test_no_gil_held_while_a_frame_waits_for_the_gpu(torch, runs_during):
    """The host path's turn ends by waiting for the stream (its copy to
    pinned memory): a GPU kept busy ~0.2 s inside the frame makes that wait
    long; another Python thread must run meanwhile."""
    with viewer_on("host") as v:
        with v.frame() as img:
            torch.from_dlpack(img).fill_(1)  # warm up
        block = v.frame()
        img = block.__enter__()
        torch.cuda._sleep(400_000_000)  # the GPU busy some 0.2 s (cycles)
        torch.from_dlpack(img).fill_(2)
        took, noted = runs_during(lambda: block.__exit__(None, None, None))
        assert (v.read_pixels() == 2).all()
    print("# the frame's end waited %.3f s; the other thread noted the time %d times in its "
          "middle half" % (took, noted))
    assert took > 0.05
    assert noted >= 3


# --- copies, counted by the driver shim ---------------------------------------------------------

SHIM_SCRIPT = r"""
import sys, torch, cugl
path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.cuda.set_device(0)
v = cugl.Viewer(50, 30, headless=True, interop=path)
src = torch.zeros(30, 50, 4, dtype=torch.uint8, device="cuda")
for i in range(n):
    if mode == "frame":
        with v.frame() as img:
            torch.from_dlpack(img)[..., 0].fill_(i & 255)
    else:
        src[..., 0].fill_(i & 255)
        v.show(src)
torch.cuda.synchronize()
assert (v.read_pixels()[..., 0] == (n - 1) & 255).all()  # the last frame is drawn
v.close()
print("copies", v.copies)
"""


COPIES = ("cuMemcpy", "cuMemset", "cuLaunch")


def copy_calls(tmp_path, path, mode, frames, names=COPIES):
    """The driver calls libcugl made whose names start with one of `names`
    (by default those that copy, cuMemcpy* and cuMemset*, or run a kernel,
    cuLaunch*: the strided copy's), over a run of `frames` frames, as the
    fault shim's log counts them."""
    shim = os.environ.get("CUGL_TEST_FAULT_SHIM")
    if not shim:
        pytest.skip("the build has no fault shim (tests/fault): CUGL_TEST_FAULT_SHIM unset")
    log = tmp_path / ("%s-%s-%d.log" % (path, mode, frames))
    env = dict(os.environ, CUGL_LIBCUDA=shim, CUGL_FAULT_LOG=str(log))
    for k in ("CUGL_FAULT_CALL", "CUGL_FAULT_FUNC", "CUGL_FAULT_SITE"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", SHIM_SCRIPT, path, mode, str(frames)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = log.read_text().splitlines()
    assert "sites-full" not in lines
    calls = {}
    for line in lines:
        w = line.split()
        if w[0] == "site" and w[2].startswith(names):
            calls[w[2]] = calls.get(w[2], 0) + int(w[3])
    return calls


def per_frame(tmp_path, path, mode, names=COPIES):
    few = copy_calls(tmp_path, path, mode, 4, names)
    many = copy_calls(tmp_path, path, mode, 14, names)
    grown = {name: (many.get(name, 0) - few.get(name, 0)) / 10 for name in set(few) | set(many)}
    print("# %s, %s: %s calls a frame: %s" % (path, mode, "/".join(names), grown or "none"))
    return sum(grown.values())


@pytest.mark.parametrize("path", ["map", "shared"])
def test_frame_copies_nothing(torch, tmp_path, path):
    assert per_frame(tmp_path, path, "frame") == 0


@pytest.mark.parametrize("path", ["map", "shared"])
def test_frame_written_on_the_default_stream_orders_no_streams(torch, tmp_path, path):
    """PyTorch writes on the legacy default stream, where frame()'s turn runs
    by default: no stream waits for another. (With the turn on the viewer's
    own stream there were two waits a frame, and on the map path 2.1 ms a
    frame more at 1920x1080 on an H100.)"""
    assert per_frame(tmp_path, path, "frame", ("cuStreamWaitEvent",)) == 0


def test_frame_on_the_host_path_copies_only_through_pinned_memory(torch, tmp_path):
    assert per_frame(tmp_path, "host", "frame") == 1  # the path's own device-to-host copy


@pytest.mark.parametrize("path", ["map", "shared"])
def test_show_makes_one_copy(torch, tmp_path, path):
    assert per_frame(tmp_path, path, "show") == 1


def test_show_on_the_host_path(torch, tmp_path):
    # One device-to-device copy into the target's device memory, and the
    # path's own to pinned memory.
    assert per_frame(tmp_path, "host", "show") == 2


# --- a second GPU, leaks ------------------------------------------------------------------------


@pytest.mark.multi_gpu
def test_tensors_on_a_second_gpu(torch):
    """GL on device 0, the tensors and the viewer's stream on device 1."""
    if torch.cuda.device_count() < 2 or cugl.device_count() < 2:
        pytest.skip("needs two CUDA devices; this machine has %d" % torch.cuda.device_count())
    cugl.Device(1).set_current()
    with torch.cuda.device(1):
        pattern = tensor(torch, torch.uint8, 4)
        field = torch.linspace(0, 1, H * W, device="cuda").reshape(H, W)
        with cugl.Viewer(W, H, headless=True, device=0, compute_device=1) as v:
            assert v.device.device_id == 1 and v.stream.device.device_id == 1
            print("# GL on device 0, CUDA on 1: %s: %s" % (v.interop, v.reason))
            v.show(pattern)
            assert np.array_equal(v.read_pixels(), pattern.cpu().numpy())
            v.show(field)
            assert colour_map_indices_near(v.read_pixels(), field.cpu().numpy())
            with v.frame() as img:
                out = torch.from_dlpack(img)
                # The memory is where the path keeps it (the shared path's
                # lives on the GL GPU, device 1 writing it through peer access).
                print("# frame()'s tensor is on %s" % out.device)
                out.copy_(pattern.flip(0).to(out.device))
            assert np.array_equal(v.read_pixels(), pattern.cpu().numpy())


def decoded_frames(path):
    """Each frame of the video file at `path` as the tests' own reader
    (tests/record's record_read) decodes it: (luma mean, luma spread)."""
    reader = os.environ.get("CUGL_TEST_RECORD_READ")
    if not reader:
        pytest.fail("CUGL_TEST_RECORD_READ names no reader (the build's tests/record)")
    out = subprocess.run([reader, "--decode", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    frames = []
    for line in lines[1:]:
        words = dict(w.split("=") for w in line.split())
        frames.append((float(words["luma"]), float(words["spread"])))
    return lines[0], frames


@pytest.mark.parametrize("path", PATHS)
def test_frames_written_by_cuda_are_recorded(torch, tmp_path, path):
    """What CUDA writes through frame() is what the file holds, on every
    path: a bright frame, a dark one, a striped one, in turn."""
    if not _app_lib.has("record"):
        pytest.skip("this libcugl-app has no recorder")
    w, h, count = 64, 48, 12
    with viewer_on(path, w, h) as v:
        rec = None
        for suffix in (".mp4", ".webm"):
            try:
                rec = v.record(str(tmp_path / ("run" + suffix)), keep_every_frame=True)
                break
            except cugl.NotSupportedError:
                continue
        assert rec is not None, "the recorder is built with neither codec"
        for i in range(count):
            with v.frame() as img:
                out = torch.from_dlpack(img)
                if i % 3 == 0:
                    out.fill_(230)
                elif i % 3 == 1:
                    out.fill_(20)
                else:
                    out.zero_()
                    out[:, ::8] = 255  # white columns, one in 8
                out[..., 3] = 255
        final = v.stop_recording()
    assert (final.kept, final.written, final.dropped) == (count, count, 0)
    info, frames = decoded_frames(rec.path)
    assert info.endswith("width=%d height=%d frames=%d" % (w, h, count)), info
    for i, (luma, spread) in enumerate(frames):
        # BT.601's limited range: white 235, black 16; the stripes an eighth white.
        want = [16 + 219 * 230 / 255, 16 + 219 * 20 / 255, 16 + 219 / 8][i % 3]
        assert abs(luma - want) < 8, (i, luma, want)
        assert (spread > 30) == (i % 3 == 2), (i, spread)


@pytest.mark.parametrize("path", PATHS)
def test_no_growth_over_many_frames(torch, path):
    t = tensor(torch, torch.uint8, 4)
    one = tensor(torch, torch.float32, 1)
    other = tensor(torch, torch.uint8, 4, seed=2)
    with viewer_on(path) as v:
        def frames(n):
            for i in range(n):
                v.show(t)
                v.show(one)
                with v.frame() as img:
                    torch.from_dlpack(img)[..., 0].fill_(i & 255)

        def settle():
            # Every copy run; a frame lets go of the CUDA objects of earlier
            # frames that the stream has passed (as many are held at the last
            # frame as the GPU lagged then), and a show of `other` of the
            # sources of the earlier shows (each holds its own: the same
            # before and after).
            torch.cuda.synchronize()
            v.stream.sync()
            with v.frame():
                pass
            v.show(other)
            v.stream.sync()
            gc.collect()
            return (cugl.live_objects(), cugl.live_bytes(), torch.cuda.memory_allocated(),
                    sys.getrefcount(t), sys.getrefcount(one))

        frames(20)
        before = settle()
        frames(1000)
        after = settle()
    assert after == before


# --- the examples and the frame-time table -------------------------------------------------------


def run_example(name, *args):
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--headless"] +
                         list(args), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.mark.parametrize("how", ["frame", "show"])
def test_the_torch_example(torch, how):
    extra = ["--show"] if how == "show" else []
    # The poke away from the panel (top left), which would take the mouse.
    out = run_example("wave_torch.py", "--frames", "30", "--size", "320x240", "--poke",
                      "260,200", *extra)
    assert out.startswith("wave_torch: 30 frames,"), out
    assert float(out.split("field energy ")[1].split()[0]) > 0, out  # the poke moved it


def test_the_cupy_example(device):
    pytest.importorskip("cupy", reason="CuPy is not installed")
    out = run_example("gray_scott_cupy.py", "--frames", "30", "--size", "320x240", "--poke",
                      "260,200")
    assert out.startswith("gray_scott_cupy: 30 frames,"), out
    assert float(out.split("reactant ")[1].split()[0]) > 0, out


@pytest.mark.optional_package("warp")
def test_the_warp_example(device):
    pytest.importorskip("warp", reason="NVIDIA Warp is not installed")
    out = run_example("wave_warp.py", "--frames", "30", "--size", "320x240", "--poke",
                      "260,200")
    assert out.startswith("wave_warp: 30 frames,"), out
    assert float(out.split("field energy ")[1].split()[0]) > 0, out


def test_frame_times_at_1920x1080(torch, capsys):
    """The table the lead compares: the Python frame beside the C example's
    (cugl-julia --bench), at 1920x1080, on every path."""
    args = [sys.executable, os.path.join(EXAMPLES, "frame_time.py"), "--frames", "120"]
    if os.environ.get("CUGL_TEST_C_EXAMPLE"):
        args += ["--c-example", os.environ["CUGL_TEST_C_EXAMPLE"]]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    with capsys.disabled():
        print("\n" + out.stdout)
    rows = [line.split("|")[1:-1] for line in out.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| path")]
    assert [r[0].strip() for r in rows] == ["map", "shared", "shared-pipelined", "host"]
    for r in rows:
        assert all(float(c) > 0 for c in r[1:5]), r
