"""cugl.Viewer on any GL (Mesa here, with no CUDA: the host path, host
memory): what show() draws against the C API's own picture and the
expected pixels, the colour map against its formula, the GL program that
device memory of 1 and 3 channels goes through, points, input events in
order, the panel, serving, DLPack deleters called once, no growth over
thousands of shows, frame()'s refusal without a device, exceptions that leave
the viewer usable, close() once, no GIL held in libcugl-app's calls, and
recordings (video files read back by their containers and by ffprobe)."""
import ctypes
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import urllib.error
import urllib.request
import warnings
from ctypes import byref, c_void_p, create_string_buffer

import numpy as np
import pytest

import cugl
from cugl import _app_lib, _dlpack, _notices
from cugl._app_structs import AppEvent, AppTargetDesc

import video_files
from dlpack_producer import Producer

W, H = 40, 24
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)


def make_viewer(width=W, height=H, **kwargs):
    """A headless viewer on no CUDA device (the host path, host memory),
    also where there is one; skipped only where there is no EGL display."""
    kwargs.setdefault("device", -1)
    try:
        return cugl.Viewer(width, height, headless=True, **kwargs)
    except cugl.NotSupportedError as e:
        if "no EGL" in str(e):
            pytest.skip(str(e))
        raise


@pytest.fixture
def viewer():
    v = make_viewer()
    yield v
    v.close()


def rng(seed=7):
    return np.random.default_rng(seed)


def image(dtype, channels, height=H, width=W, seed=7):
    r = rng(seed)
    shape = (height, width, channels)
    if dtype == np.uint8:
        return r.integers(0, 256, shape, dtype=np.uint8)
    # Values past 0 .. 1 too: drawn clamped.
    return (r.random(shape) * 1.4 - 0.2).astype(dtype)


def c_api_picture(v, rgba, origin=1):
    """What the C API draws for `rgba` (H x W x 4 of uint8, float16 or
    float32) in the viewer's context: a target of libcugl-app's own made,
    filled with cugl_app_target_copy_from and drawn with
    cugl_app_target_draw_origin (1: CUGL_APP_ORIGIN_UPPER, row 0 at the
    top, as show() by default), read back top to bottom."""
    app = _app_lib.load()
    fmt = {"uint8": 0, "float16": 1, "float32": 2}[rgba.dtype.name]
    height, width = rgba.shape[:2]
    desc = AppTargetDesc(format=fmt, width=width, height=height)
    t = c_void_p()
    v._res.make_current()
    app.cugl_app_target_create(byref(t), v._res.ctx, byref(desc))
    try:
        src = cugl.from_dlpack(rgba)
        app.cugl_app_target_copy_from(t, src._ptr, None)
        gl = v._res.gl
        gl.glBindFramebuffer(0x8D40, app.cugl_app_context_framebuffer(v._res.ctx))
        vw, vh = v.size
        gl.glViewport(0, 0, vw, vh)
        gl.glClearColor(0, 0, 0, 1)
        gl.glClear(0x4000)
        app.cugl_app_target_draw_origin(t, origin)
        buf = create_string_buffer(vw * vh * 4)
        app.cugl_app_read_pixels(buf, vw * vh * 4, v._res.ctx)
        return np.frombuffer(buf.raw, np.uint8).reshape(vh, vw, 4).copy()
    finally:
        app.cugl_app_target_destroy(t)


def levels(x):
    """Floats as the framebuffer stores them: clamped, to the nearest of 255 levels."""
    return np.rint(np.clip(x.astype(np.float64), 0, 1) * 255).astype(np.int64)


def max_level_difference(a, b):
    return int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max())


def test_without_cuda_the_host_path_and_host_memory(viewer):
    assert viewer.interop == "host"
    assert "no CUDA device" in viewer.reason
    assert viewer.device is None and viewer.stream is None
    assert viewer.headless and viewer.size == (W, H)
    assert viewer.platform.startswith("egl")
    assert os.path.basename(cugl.app_library_path()).startswith("libcugl-app.so")


# --- show(): the pictures ---------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32], ids=lambda d: d.__name__)
def test_four_channels_are_the_c_apis_picture(viewer, dtype):
    a = image(dtype, 4)
    viewer.show(a)
    got = viewer.read_pixels()
    assert np.array_equal(got, c_api_picture(viewer, a))  # the same calls, the same picture
    # Row 0 at the top, as NumPy has it (origin="upper", the default).
    if dtype == np.uint8:
        assert np.array_equal(got, a)
    else:
        assert max_level_difference(got, levels(a)) <= 1


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32], ids=lambda d: d.__name__)
def test_three_channels_are_drawn_opaque(viewer, dtype):
    a = image(dtype, 3)
    viewer.show(a)
    got = viewer.read_pixels()
    assert (got[..., 3] == 255).all()
    if dtype == np.uint8:
        assert np.array_equal(got[..., :3], a)
        padded = np.concatenate([a, np.full((H, W, 1), 255, np.uint8)], axis=2)
    else:
        assert max_level_difference(got[..., :3], levels(a)) <= 1
        padded = np.concatenate([a, np.ones((H, W, 1), a.dtype)], axis=2)
    assert np.array_equal(got, c_api_picture(viewer, padded))


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64, np.int16],
                         ids=lambda d: d.__name__)
@pytest.mark.parametrize("two_d", [False, True], ids=["HxWx1", "HxW"])
def test_one_channel_goes_through_the_colour_map(viewer, dtype, two_d):
    if dtype == np.int16:
        a = rng().integers(-100, 400, (H, W, 1)).astype(np.int16)
        vmin, vmax = 0, 300
    else:
        a = image(dtype, 1)
        vmin = vmax = None
    a = a[..., 0] if two_d else a
    viewer.show(a, vmin=vmin, vmax=vmax)
    got = viewer.read_pixels()
    want = cugl.colormap(a.reshape(H, W), vmin, vmax)
    assert np.array_equal(got, want)
    assert np.array_equal(got, c_api_picture(viewer, want))


def test_the_colour_map_formula():
    table = np.asarray(cugl._colormap.table("cugl"), np.uint8)
    assert table.shape == (256, 4) and (table[:, 3] == 255).all()
    assert tuple(table[0]) == (0, 0, 0, 255) and tuple(table[255]) == (255, 255, 255, 255)
    luminance = table[:, :3].astype(np.int64) @ np.array([299, 587, 114])
    assert (np.diff(luminance) > 0).all()  # dark to light, all the way
    v = np.array([-1.0, 0.0, 0.5 / 255, 0.499, 0.5, 1.0, 7.0, np.nan, np.inf, -np.inf],
                 np.float32)
    index = [0, 0, 1, 127, 128, 255, 255, 0, 255, 0]
    assert np.array_equal(cugl.colormap(v), table[index])
    u8 = np.arange(256, dtype=np.uint8)
    assert np.array_equal(cugl.colormap(u8), table)  # each byte its own entry
    assert np.array_equal(cugl.colormap(u8, cmap="grey")[:, 0], u8)
    assert np.array_equal(cugl.colormap(np.float32([2.0, 4.0]), vmin=2, vmax=4), table[[0, 255]])
    own = np.stack([np.arange(256)] * 3, axis=1)[::-1]
    assert np.array_equal(cugl.colormap(u8, cmap=own)[:, 0], own[:, 0])
    with pytest.raises(ValueError):
        cugl.colormap(u8, cmap="nope")
    with pytest.raises(ValueError):
        cugl.colormap(u8, vmin=1, vmax=1)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32], ids=lambda d: d.__name__)
def test_the_gl_program_device_memory_takes_draws_the_same(viewer, dtype):
    """Device memory of 1 and 3 channels is copied as it is into a buffer
    target and drawn by the viewer's GL program: the same picture as host
    memory's NumPy path (the colour map's index within 1, where GL's and
    NumPy's float32 roundings may part; floats within 1 level)."""
    one = image(dtype, 1)[..., 0]
    if dtype != np.uint8:
        # Values on the colour map's rounding edges, where index ties live.
        one.flat[:256] = (np.arange(256, dtype=np.float32) + 0.5) / 255
    viewer.show(one)
    numpy_way = viewer.read_pixels()
    viewer._show_through_program(one)
    program_way = viewer.read_pixels()
    table = np.asarray(cugl._colormap.table("cugl"), np.int64)
    t = np.clip(one.astype(np.float32), 0, 1)
    index = (t * np.float32(255) + np.float32(0.5)).astype(np.int64)
    if dtype == np.uint8:
        index = one.astype(np.int64)
        assert np.array_equal(program_way, numpy_way)
    near = [table[np.clip(index + d, 0, 255)] for d in (-1, 0, 1)]
    ok = np.zeros((H, W), bool)
    for n in near:
        ok |= (program_way == n).all(axis=2)
    assert ok.all(), np.argwhere(~ok)[:5]

    three = image(dtype, 3, seed=3)
    viewer.show(three)
    numpy_way = viewer.read_pixels()
    viewer._show_through_program(three)
    program_way = viewer.read_pixels()
    if dtype == np.uint8:
        assert np.array_equal(program_way, numpy_way)
    else:
        assert max_level_difference(program_way, numpy_way) <= 1
        assert max_level_difference(program_way[..., :3], levels(three)) <= 1


def test_odd_sizes_through_the_program(viewer):
    """Sizes whose bytes are no multiple of 4, and a vmin/vmax of its own."""
    a = rng().integers(0, 256, (5, 3), dtype=np.uint8)
    viewer._show_through_program(a, vmin=50, vmax=200)
    got = viewer.read_pixels()
    want = cugl.colormap(a, 50, 200)
    # 3 x 5 texels over 40 x 24 pixels, nearest: pixel x shows texel
    # floor((x + 0.5) * 3 / 40), rows likewise (counted from the top).
    ys = ((np.arange(H) + 0.5) * 5 / H).astype(int)
    xs = ((np.arange(W) + 0.5) * 3 / W).astype(int)
    assert np.array_equal(got, want[ys][:, xs])
    # Row 0 at the bottom where asked: the same picture upside down.
    viewer._show_through_program(a, vmin=50, vmax=200, origin="lower")
    assert np.array_equal(viewer.read_pixels(), want[ys][:, xs][::-1])


def test_strided_and_scaled_images(viewer):
    base = image(np.uint8, 4, height=2 * H, width=2 * W)
    strided = base[::2, ::2]  # every other row and column
    assert not strided.flags.c_contiguous
    viewer.show(strided)
    assert np.array_equal(viewer.read_pixels(), np.ascontiguousarray(strided))
    small = image(np.uint8, 4, height=H // 2, width=W // 2)
    viewer.show(small)  # drawn over the whole framebuffer, nearest
    assert np.array_equal(viewer.read_pixels(), small.repeat(2, 0).repeat(2, 1))
    transposed = image(np.uint8, 3, height=W, width=H).transpose(1, 0, 2)
    viewer.show(transposed)
    assert np.array_equal(viewer.read_pixels()[..., :3], transposed)


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_origin_says_where_row_zero_goes(viewer, channels):
    """Row 0 at the top by default (NumPy's, matplotlib's imshow's
    origin="upper"), at the bottom with origin="lower" (GL's and the C
    API's cugl_app_target_draw); every way an image is drawn (4 channels:
    the image target; 1 and 3: NumPy's colours, and the GL program device
    memory takes)."""
    a = np.zeros((H, W, channels), np.uint8)
    a[0] = 255
    top_lit = np.zeros((H, W), bool)
    top_lit[0] = True
    for show in (viewer.show, viewer._show_through_program):
        if show is viewer._show_through_program and channels == 4:
            continue
        for origin, lit in (("upper", top_lit), ("lower", top_lit[::-1])):
            show(a, origin=origin)
            got = viewer.read_pixels()
            assert np.array_equal(got[..., 0] == 255, lit), (show.__name__, origin)
        show(a)
        assert np.array_equal(viewer.read_pixels()[..., 0] == 255, top_lit)
    with pytest.raises(ValueError, match=r"origin 'top' is neither 'upper' \(row 0 at the top\)"):
        viewer.show(a, origin="top")


def test_any_dlpack_object(viewer):
    """A producer that is not NumPy (DLPack 1.x and 0.x capsules), and a
    cugl view."""
    a = image(np.uint8, 4)
    for versioned in (True, None):
        viewer.show(Producer(a, versioned=versioned))
        assert np.array_equal(viewer.read_pixels(), a)
    view = cugl.from_dlpack(a)
    viewer.show(view)
    assert not view.is_closed  # the caller's view stays the caller's
    assert np.array_equal(viewer.read_pixels(), a)


# --- points ---------------------------------------------------------------------------

# Near the quadrants' centres, on pixel centres (x = 10.5 of 40, y = 6.5 of
# 24, ...): a point's square then covers whole pixels, with no pixel centre
# on its edges for the rasteriser's tie rules to decide.
QUADRANTS = [(2 * px / W - 1, 2 * py / H - 1)
             for px, py in [(10.5, 6.5), (30.5, 6.5), (10.5, 18.5), (30.5, 18.5)]]


def lit_pixels(px):
    return {(x, y) for y, x in zip(*np.nonzero(px[..., 0] == 255))}


@pytest.mark.parametrize("components", [3, 4])
def test_points_land_where_they_are(viewer, components):
    p = np.zeros((4, components), np.float32)
    p[:, :2] = QUADRANTS
    viewer.show(p, point_size=3)
    px = viewer.read_pixels()
    lit = lit_pixels(px)
    assert len(lit) == 4 * 9  # four 3 x 3 squares and nothing else
    for x, y in QUADRANTS:
        col, row_from_bottom = int((x * 0.5 + 0.5) * W), int((y * 0.5 + 0.5) * H)
        # The 3 x 3 square around the point's pixel.
        assert {(col + dx, H - 1 - row_from_bottom - dy) for dx in (-1, 0, 1)
                for dy in (-1, 0, 1)} <= lit
    assert tuple(px[0, 0]) == (0, 0, 0, 255)


def test_points_with_a_matrix_and_colour(viewer):
    # Mirrored to the centre of pixel (9, 5 from the bottom): x = 9.5 / 20 - 1.
    p = np.array([[1 - 9.5 / (W / 2), 1 - 5.5 / (H / 2), 0.0]])  # float64: made float32
    mirror = np.diag([-1.0, -1.0, 1.0, 1.0])  # applied as M @ (x, y, z, 1)
    viewer.show(p, point_size=1, color=(0, 1, 0, 1), matrix=mirror)
    px = viewer.read_pixels()
    green = {(x, y) for y, x in zip(*np.nonzero(px[..., 1] == 255))}
    assert green == {(9, H - 1 - 5)}
    assert (px[..., 0] == 0).all()
    viewer.show(np.zeros((0, 3), np.float32))  # none: a cleared frame
    assert (viewer.read_pixels()[..., :3] == 0).all()
    # Forced either way.
    viewer.show(np.full((H, 4), 0.5, np.float32), points=False)
    assert (viewer.read_pixels() == cugl.colormap(np.float32(0.5))).all()


# --- input -------------------------------------------------------------------------------


def c_event(**fields):
    return AppEvent(**fields)


def test_pushed_events_come_back_in_order(viewer):
    app = _app_lib.load()
    # Pushed through the C API itself, then through push_event.
    pushed = [c_event(type=0, x=12, y=7), c_event(type=1, code=0, down=True),
              c_event(type=2, y=-2), c_event(type=3, code=ord("A"), down=True),
              c_event(type=0, x=30.5, y=1.25), c_event(type=1, code=0, down=False)]
    for ev in pushed:
        app.cugl_app_context_push_event(viewer._res.ctx, byref(ev))
    viewer.push_event("key escape down")
    viewer.push_event(cugl.InputEvent.parse("5 button right down"))
    assert viewer.events() == []  # applied at the next present
    viewer.present()
    frame = viewer.frame_number  # the frame whose input holds them
    events = viewer.events()
    assert [str(e) for e in events] == [
        "%d move 12 7" % frame, "%d button left down" % frame, "%d scroll -2" % frame,
        "%d key A down" % frame, "%d move 30.5 1.25" % frame, "%d button left up" % frame,
        "%d key escape down" % frame, "%d button right down" % frame]
    e = events
    assert (e[0].type, e[0].x, e[0].y) == ("move", 12, 7)
    assert (e[1].type, e[1].button, e[1].down) == ("button", "left", True)
    assert (e[2].type, e[2].steps) == ("scroll", -2)
    assert (e[3].type, e[3].key, e[3].code) == ("key", "A", 65)
    assert (e[6].key, e[7].button) == ("escape", "right")
    # The state: the last position, the keys held, right held, and left,
    # pressed and released within the frame, shown as held for this frame
    # alone (a click between two presents is not lost).
    state = viewer.input
    assert (state.x, state.y, state.left, state.right) == (30.5, 1.25, True, True)
    assert viewer.key_down("a") and viewer.key_down("A") and viewer.key_down(65)
    assert viewer.key_down("escape") and not viewer.key_down("space")
    assert viewer.key_presses("a") == 1 and viewer.key_presses("space") == 0
    assert viewer.should_close  # Escape asks to close
    viewer.present()
    assert viewer.events() == []  # the next frame has none
    assert viewer.key_down("a") and viewer.key_presses("a") == 0  # held, not pressed again
    assert not viewer.input.left and viewer.input.right  # the click shows no more
    for line in ("key space down", "key space up", "key space down", "key space up"):
        viewer.push_event(line)
    viewer.present()
    assert viewer.key_presses("space") == 2 and not viewer.key_down("space")


def test_resize_and_close_events(viewer):
    viewer.push_event("resize 64 32")
    viewer.push_event("close")
    viewer.present()
    assert [(e.type, e.width, e.height) for e in viewer.events()][0] == ("resize", 64, 32)
    assert viewer.events()[1].type == "close" and viewer.should_close
    assert viewer.size == (64, 32)
    a = image(np.uint8, 4, height=32, width=64)
    viewer.show(a)  # the next frame has the new size
    assert np.array_equal(viewer.read_pixels(), a)


def test_event_text_and_refusals(viewer):
    e = cugl.InputEvent.parse("move 3 4")
    assert str(e) == "0 move 3 4" and e == cugl.InputEvent.parse("0 move 3 4")
    with pytest.raises(cugl.InvalidArgumentError) as info:
        cugl.InputEvent.parse("jump 3")
    assert "cugl_app_event_parse" in str(info.value)
    with pytest.raises(ValueError):
        viewer.key_down("no_such_key")


# --- frame() and exceptions -----------------------------------------------------------------


def test_frame_refuses_without_cuda_and_the_viewer_goes_on(viewer):
    with pytest.raises(cugl.NotSupportedError) as info:
        with viewer.frame():
            pass
    assert "Viewer.frame: the viewer has no CUDA device" in str(info.value)
    assert "show() a host array" in str(info.value)
    a = image(np.uint8, 4)
    viewer.show(a)
    assert np.array_equal(viewer.read_pixels(), a)


class Exploding:
    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        raise RuntimeError("the producer failed")


def test_refusals_leave_the_viewer_usable(viewer):
    before = (cugl.live_objects(), cugl.live_bytes())
    with pytest.raises(RuntimeError, match="the producer failed"):
        viewer.show(Exploding())
    with pytest.raises(ValueError, match="an image is"):
        viewer.show(np.zeros((H, W, 2), np.uint8))
    with pytest.raises(TypeError, match="uint8, float16, float32"):
        viewer.show(np.zeros((H, W, 4), np.int32))
    with pytest.raises(TypeError, match="points are float32"):
        viewer.show(np.zeros((4, 3), np.int32), points=True)
    with pytest.raises(ValueError, match="color"):
        viewer.show(np.zeros((4, 3), np.float32), color=(1, 1))
    with pytest.raises(BufferError):
        viewer.show(object())
    gc.collect()
    assert (cugl.live_objects(), cugl.live_bytes()) == before
    a = image(np.uint8, 4)
    viewer.show(a)
    assert np.array_equal(viewer.read_pixels(), a)


def test_the_paths_that_need_cuda_are_refused_with_the_c_message():
    with pytest.raises(cugl.NotSupportedError) as info:
        make_viewer(interop="map")
    assert "the map path needs a CUDA device" in str(info.value)
    try:
        cugl.device_count()
    except cugl.NoDriverError:
        with pytest.raises(cugl.NoDriverError):
            make_viewer(device=0)  # asked for, where there is none
    with pytest.raises(ValueError):
        make_viewer(interop="fast")


def test_only_the_making_thread_uses_it(viewer):
    caught = []
    t = threading.Thread(target=lambda: caught.append(
        pytest.raises(cugl.InvalidStateError, viewer.show, image(np.uint8, 4))))
    t.start()
    t.join()
    assert "the thread that made it" in str(caught[0].value)


# --- lifetime, deleters, leaks ----------------------------------------------------------


def test_close_frees_everything_once():
    gc.collect()
    before = (cugl.live_objects(), cugl.live_bytes())
    v = make_viewer()
    v.show(image(np.uint8, 4))
    v.show(image(np.float32, 1))
    v._show_through_program(image(np.float32, 3))
    v.show(np.zeros((4, 3), np.float32))
    v.close()
    v.close()  # once only
    assert v.is_closed and repr(v) == "<Viewer closed>"
    with pytest.raises(cugl.ClosedError):
        v.show(image(np.uint8, 4))
    with pytest.raises(cugl.ClosedError):
        v.should_close
    gc.collect()
    assert (cugl.live_objects(), cugl.live_bytes()) == before
    with make_viewer() as w:
        w.show(image(np.uint8, 4))
    assert w.is_closed


def test_a_dropped_viewer_is_freed_without_waiting_for_the_collector():
    v = make_viewer()
    v.show(image(np.uint8, 4))
    v.show(np.zeros((4, 3), np.float32))
    finalizer = v._finalizer
    del v  # no reference cycle keeps it: freed now
    assert not finalizer.alive


@pytest.mark.parametrize("what", ["rgba", "one-channel", "points"])
@pytest.mark.parametrize("versioned", [True, False, None])
def test_deleters_of_imported_tensors_are_called_once(viewer, what, versioned):
    arrays = {"rgba": image(np.uint8, 4), "one-channel": image(np.float32, 1),
              "points": np.zeros((5, 4), np.float32)}
    p = Producer(arrays[what], versioned=versioned)
    for _ in range(50):
        viewer.show(p)
    gc.collect()
    assert p.made == 50 and p.deleted == 50


# Shows of each kind: the colour map's each run NumPy over the image on the
# host, which tracemalloc slows eightfold (16 s for 10,000 on 2 cores), so
# it gets 2,000.
SHOWS = {"rgba8": 10_000, "colour-map": 2_000, "points": 10_000}
# What Python's and NumPy's own caches make and free meanwhile (a few dozen
# blocks, once 106 over 2,000 colour-map shows): a show that kept even one
# block each time would keep four times this or more.
NOISE_BLOCKS = 500


def traced_blocks():
    """The blocks Python has allocated and not freed, as tracemalloc sees them."""
    return sum(stat.count for stat in tracemalloc.take_snapshot().statistics("filename"))


@pytest.mark.parametrize("what", ["rgba8", "colour-map", "points"])
def test_no_growth_over_thousands_of_shows(what):
    """cugl's live objects and bytes, the package's held tensors and
    exports, and Python's own allocations (tracemalloc) stay where they
    were over thousands of shows (SHOWS)."""
    v = make_viewer(16, 8)
    source = {"rgba8": image(np.uint8, 4, 8, 16), "colour-map": image(np.float32, 1, 8, 16),
              "points": np.zeros((8, 3), np.float32)}[what]
    try:
        for _ in range(50):  # warm up: what is made once and kept is no leak
            v.show(source)
        gc.collect()
        tracemalloc.start()
        before = (cugl.live_objects(), cugl.live_bytes(), _dlpack.held_count(),
                  _dlpack.exports_count(), sys.getrefcount(source))
        blocks_before = traced_blocks()
        for _ in range(SHOWS[what]):
            v.show(source)
        gc.collect()
        blocks_after = traced_blocks()
        after = (cugl.live_objects(), cugl.live_bytes(), _dlpack.held_count(),
                 _dlpack.exports_count(), sys.getrefcount(source))
    finally:
        tracemalloc.stop()
        v.close()
    assert after == before
    # Nothing kept per call: a show that kept anything would keep at least a
    # block of Python's each time (thousands); caches of NumPy's and Python's
    # own (their interned names, free lists) come and go by a few dozen,
    # and by some kilobytes, which is why blocks are counted, not bytes.
    assert blocks_after - blocks_before < NOISE_BLOCKS, (blocks_before, blocks_after)


# --- the GIL ---------------------------------------------------------------------------------


def test_libcugl_app_is_called_without_the_gil():
    """ctypes.CDLL (not PyDLL) functions release the GIL for each call; so
    do the GL functions the viewer loads (CFUNCTYPE)."""
    app = _app_lib.load()
    assert type(app) is ctypes.CDLL
    for name in _app_lib.ALL_PROTOTYPES:
        if hasattr(app, name):
            assert not getattr(app, name)._flags_ & ctypes._FUNCFLAG_PYTHONAPI, name
    v = make_viewer()
    try:
        for name in cugl._gl.FUNCTIONS:
            assert not getattr(v._res.gl, name)._flags_ & ctypes._FUNCFLAG_PYTHONAPI, name
    finally:
        v.close()


def test_another_thread_runs_during_a_long_call(runs_during, tmp_path):
    """Behind the flags: a screenshot of a 1024 x 1024 frame of noise (the
    read-back and libpng's compression, a tenth of a second or more in one
    C call on any machine) lets another Python thread run meanwhile."""
    v = make_viewer(1024, 1024)
    try:
        v.show(image(np.uint8, 4, 1024, 1024))
        app = _app_lib.load()
        path = str(tmp_path / "noise.png").encode()
        took, noted = runs_during(lambda: app.cugl_app_screenshot(v._res.ctx, path))
    finally:
        v.close()
    print("# one screenshot: %.3f s; the other thread noted the time %d times in its "
          "middle half" % (took, noted))
    assert took > 0.02, "the call was too short to tell"
    assert noted >= 3


# --- the panel and serving -----------------------------------------------------------------


def test_panel_widgets(viewer):
    if not viewer.has_panel:
        with pytest.raises(cugl.NotSupportedError, match="without the panel"):
            viewer.checkbox("flip", False)
        pytest.skip("this libcugl-app has no panel (Meson feature ui)")
    picture = image(np.uint8, 4, 240, 320)
    v = make_viewer(320, 240)
    try:
        value = False
        v.push_event("move 319 239")
        for _ in range(2):  # measured, then shown
            assert v.checkbox("flip", value) is False
            v.show(picture)
        with_panel = v.read_pixels()
        assert not np.array_equal(with_panel, picture)  # the panel over the picture
        assert np.array_equal(with_panel[-20:, -20:], picture[-20:, -20:])
        # A click on the box (the default style puts it at (20, 36)) flips it.
        for want in (True, False):
            v.push_event("move 20 36")
            v.push_event("button left down")
            v.present()
            value = v.checkbox("flip", value)
            assert v.panel_wants_mouse
            v.push_event("button left up")
            v.present()
            value = v.checkbox("flip", value)
            assert value is want
            v.present()
        assert v.slider("speed", 2.5, 0.0, 10.0) == 2.5
        assert v.slider("count", 10, 1, 100) == 10
        assert v.combo("shape", 1, ["sphere", "cube", "torus"]) == 1
        v.text("%d bodies, 100% sure")  # printf's % taken as text
        v.present()
        v.slider("", 1.0, 0.0, 2.0)  # refused by the panel: an empty label
        with pytest.raises(cugl.InvalidArgumentError, match="cugl_app_ui_slider_float"):
            v.present()
        v.present()  # and the panel goes on
    finally:
        v.close()


def test_serving(capsys):
    v = make_viewer()
    try:
        if not _app_lib.has("serve"):
            with pytest.raises(cugl.NotSupportedError, match="without the frame server"):
                v.serve(0)
            pytest.skip("this libcugl-app has no frame server (Meson feature serve)")
        url = v.serve(0, token="t0k")
        assert capsys.readouterr().out == "cugl: serving cugl at %s\n" % url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/?token=t0k")
        assert v.serve() == url == v.url  # already serving
        v.show(image(np.uint8, 4))
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and b"<canvas" in page.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url.split("?")[0], timeout=30)
        assert refused.value.code == 403
    finally:
        v.close()
    with make_viewer(serve=0) as w:
        assert w.url and w.url.startswith("http://127.0.0.1:")
        assert "serving" in capsys.readouterr().out


# --- recording ---------------------------------------------------------------------------------

RW, RH = 64, 48  # the viewer's size where it records: even, from 16 up
FRAMES = 12
CONTAINERS = {".mp4": "h264", ".webm": "vp8"}


def clip(i, width=RW, height=RH):
    """Frame i of a known animation: a blue bar that moves over a red and
    green gradient."""
    a = np.zeros((height, width, 4), np.uint8)
    a[..., 0] = np.arange(width)[None, :] * 255 // width
    a[..., 1] = np.arange(height)[:, None] * 255 // height
    at = 4 * i % width
    a[:, at:at + 6, 2] = 255
    a[..., 3] = 255
    return a


def no_recorder_is_refused(v):
    """True where this libcugl-app has the recorder; else its refusal checked."""
    if _app_lib.has("record"):
        return True
    with pytest.raises(cugl.NotSupportedError) as info:
        v.record("run.mp4")
    for words in ("without the recorder", "serve_h264", "serve_video", "libopenh264-dev",
                  "libvpx-dev"):
        assert words in str(info.value)
    return False


def record_or_skip(v, path, **kwargs):
    """v.record(path, ...), skipped where this libcugl-app has no recorder
    or not the codec of path's container (libcugl-app's refusal says which)."""
    if not no_recorder_is_refused(v):
        pytest.skip("this libcugl-app has no recorder (Meson features serve_h264, serve_video)")
    try:
        return v.record(path, **kwargs)
    except cugl.NotSupportedError as e:
        pytest.skip(str(e))


def record_any(v, stem, **kwargs):
    """(the recording, its path, its codec): stem + ".mp4", or ".webm" where
    this build has no H.264."""
    if not no_recorder_is_refused(v):
        pytest.skip("this libcugl-app has no recorder (Meson features serve_h264, serve_video)")
    for suffix, codec in CONTAINERS.items():
        path = str(stem) + suffix
        try:
            return v.record(path, **kwargs), path, codec
        except cugl.NotSupportedError:
            continue
    raise AssertionError("the recorder is built with neither codec")


def temporary_files(path):
    """The recorder's files beside `path` (".<name>.<pid>-<n>.tmp")."""
    prefix = ".%s.%d-" % (os.path.basename(path), os.getpid())
    return [n for n in os.listdir(os.path.dirname(path) or ".")
            if n.startswith(prefix) and n.endswith(".tmp")]


def check_video(path, codec, frames, width=RW, height=RH):
    """The file's codec, size and frames, as its container's structure says
    and as ffprobe decodes it where it is installed; ffprobe's frame times
    (None without it)."""
    want = {"codec": codec, "width": width, "height": height, "frames": frames}
    assert video_files.read(path) == want
    probed = video_files.probe(path)
    if probed is None:
        print("# no ffprobe here: %s read by its container alone" % path)
        return None
    pts = probed.pop("pts")
    assert probed == want
    assert len(pts) == frames
    return pts


# Each container in its own codec, and WebM in VP9 where asked.
RECORDINGS = [(suffix, None, codec) for suffix, codec in sorted(CONTAINERS.items())] + [
    (".webm", "vp9", "vp9")]


@pytest.mark.parametrize("suffix, asked, codec", RECORDINGS,
                         ids=["%s %s" % (s, a or "default") for s, a, _ in RECORDINGS])
def test_recording_shows_into_a_video_file(tmp_path, suffix, asked, codec):
    path = str(tmp_path / ("run" + suffix))
    with make_viewer(RW, RH) as v:
        rec = record_or_skip(v, path, keep_every_frame=True, codec=asked)
        assert v.recording is rec and rec.is_recording and rec.path == path
        for i in range(FRAMES):
            v.show(clip(i))
        c = rec.counts
        assert (c.kept, c.dropped, c.written + c.behind) == (FRAMES, 0, FRAMES)
        # Until the stop the file is written beside its name.
        assert not os.path.exists(path) and len(temporary_files(path)) == 1
        final = v.stop_recording()
        assert v.recording is None and not rec.is_recording
    assert final == rec.counts == rec.stop()
    assert (final.kept, final.written, final.dropped, final.behind) == (FRAMES, FRAMES, 0, 0)
    assert final.bytes == os.path.getsize(path) and final.waited_ms >= 0
    assert temporary_files(path) == []
    pts = check_video(path, codec, FRAMES)
    if pts is not None:  # the fixed clock: frame i at i / 60 s (WebM: to the millisecond)
        assert max(abs(t - i / 60) for i, t in enumerate(pts)) < 0.001, pts


def test_present_records_its_frame_too(tmp_path):
    with make_viewer(RW, RH) as v:
        v.show(clip(0))
        rec, path, codec = record_any(v, tmp_path / "present", keep_every_frame=True)
        for _ in range(3):
            v.present()
        v.show(clip(1))
        assert v.stop_recording().written == 4
    check_video(path, codec, 4)


def test_the_with_block_finishes_the_file(tmp_path):
    with make_viewer(RW, RH) as v:
        rec, path, codec = record_any(v, tmp_path / "with", keep_every_frame=True)
        with rec:
            for i in range(5):
                v.show(clip(i))
            assert not os.path.exists(path)
        assert os.path.exists(path) and not rec.is_recording and v.recording is None
        assert rec.counts.written == 5
        check_video(path, codec, 5)
        # The documented form, with an os.PathLike, and an exception of the
        # loop's own: the file is finished all the same, the exception goes on.
        other = tmp_path / ("other" + os.path.splitext(path)[1])
        with pytest.raises(KeyError):
            with v.record(other, keep_every_frame=True) as r:
                v.show(clip(0))
                v.show(clip(1))
                raise KeyError("the loop's own")
        assert r.path == str(other) and v.recording is None
        check_video(other, codec, 2)


def test_stop_twice_and_record_twice(tmp_path):
    with make_viewer(RW, RH) as v:
        assert v.stop_recording() is None and v.recording is None
        rec, path, _ = record_any(v, tmp_path / "first")
        second = str(tmp_path / "second.webm")
        with pytest.raises(cugl.InvalidStateError) as info:
            v.record(second)
        assert str(info.value) == ("Viewer.record: already recording %s; stop_recording() "
                                   "first" % path)
        assert v.recording is rec and not os.path.exists(second) and temporary_files(second) == []
        v.show(clip(0))
        final = v.stop_recording()
        assert final.written == 1
        assert v.stop_recording() is None
        assert rec.stop() == final and rec.counts == final
        again = v.record(path)  # a new recording once the last has stopped
        v.show(clip(1))
        assert again.stop().written == 1 and rec.counts == final


# (path under tmp_path, record()'s arguments, the exception, words of its message)
BAD_RECORDINGS = [
    ("run.mp4", {"clock": "sometimes"}, ValueError,
     "clock 'sometimes' is none of 'fixed', 'wall'"),
    ("run.mp4", {"size": 640}, TypeError, "size is a (width, height) pair or None, not 640"),
    ("run.mp4", {"size": (640, 480, 3)}, TypeError, "size is a (width, height) pair"),
    ("run.mp4", {"size": (64.0, 48)}, TypeError, "size's width is an int, not 64.0"),
    ("run.mp4", {"fps": "60"}, TypeError, "fps is a number of frames a second, not '60'"),
    ("run.mp4", {"kbps": 2**40}, ValueError, "kbps is 1099511627776: past a C int"),
    ("run.mp4", {"size": (8, 8)}, cugl.InvalidArgumentError,
     "cugl_app_recorder_create: the size is 8 x 8: both from 16 to 8192"),
    ("run.mp4", {"fps": 0.5}, cugl.InvalidArgumentError, "fps is 0.5: not from 1 to 60"),
    ("run.mp4", {"fps": 61}, cugl.InvalidArgumentError, "fps is 61: not from 1 to 60"),
    ("run.mp4", {"kbps": -1}, cugl.InvalidArgumentError, "kbps is -1: not from 1 to 1000000"),
    ("missing/run.webm", {}, cugl.InvalidArgumentError, "No such file or directory"),
    ("run.avi", {}, cugl.InvalidArgumentError,
     "run.avi: the name ends in neither .mp4 (H.264) nor .webm (VP8, VP9)"),
    ("run.webm", {"codec": "av1"}, ValueError,
     "codec 'av1' is none of None, 'h264', 'vp8', 'vp9'"),
    ("run.webm", {"codec": 3}, ValueError, "codec 3 is none of None"),
    ("run.mp4", {"codec": "vp9"}, cugl.InvalidArgumentError, "VP9 is not in .mp4"),
    ("run.webm", {"codec": "h264"}, cugl.InvalidArgumentError, "H.264 is not in .webm"),
]


@pytest.mark.parametrize("name, kwargs, error, words", BAD_RECORDINGS,
                         ids=[" ".join([n] + ["%s=%s" % kv for kv in k.items()])
                              for n, k, _, _ in BAD_RECORDINGS])
def test_bad_recordings_are_refused(tmp_path, name, kwargs, error, words):
    """What Python can tell is refused before any call into C (a plain
    TypeError or ValueError); the rest by libcugl-app, with its message."""
    with make_viewer(RW, RH) as v:
        if issubclass(error, cugl.CuglError) and not no_recorder_is_refused(v):
            pytest.skip("this libcugl-app has no recorder (Meson features serve_h264, "
                        "serve_video)")
        try:
            with pytest.raises(error) as info:
                v.record(str(tmp_path / name), **kwargs)
        except cugl.NotSupportedError as e:
            pytest.skip(str(e))  # the container's codec is not built
        assert words in str(info.value)
        if not issubclass(error, cugl.CuglError):
            assert not isinstance(info.value, cugl.CuglError)
        assert v.recording is None and os.listdir(tmp_path) == []
        with pytest.raises(TypeError, match="path is a str, bytes or os.PathLike, not 3"):
            v.record(3)


def test_closing_the_viewer_finishes_the_file(tmp_path):
    v = make_viewer(RW, RH)
    rec, path, codec = record_any(v, tmp_path / "closed", keep_every_frame=True)
    for i in range(FRAMES):
        v.show(clip(i))
    v.close()
    assert v.is_closed and not rec.is_recording
    assert rec.stop() == rec.counts and rec.counts.written == FRAMES
    check_video(path, codec, FRAMES)
    # A viewer let go of while it records: its finalizer finishes the file.
    v = make_viewer(RW, RH)
    rec, path, codec = record_any(v, tmp_path / "dropped", keep_every_frame=True)
    for i in range(3):
        v.show(clip(i))
    del v
    assert not rec.is_recording and rec.counts.written == 3
    check_video(path, codec, 3)


def test_a_recording_that_cannot_be_finished_says_so(tmp_path):
    """No frame kept: the recorder refuses to close, leaving no file and no
    temporary file. stop_recording(), the with block's end (where no other
    exception is on its way, else a warning) and close() raise it; the
    finalizer warns."""
    no_frame = "no frame was kept; nothing is written"
    with make_viewer(RW, RH) as v:
        rec, path, _ = record_any(v, tmp_path / "empty")
        with pytest.raises(cugl.InvalidStateError, match=no_frame):
            v.stop_recording()
        assert v.recording is None and not rec.is_recording and rec.counts.kept == 0
        assert not os.path.exists(path) and temporary_files(path) == []
        with pytest.raises(cugl.InvalidStateError, match=no_frame):
            with v.record(path):
                pass
        with pytest.warns(RuntimeWarning, match="recording .* was not finished: .*" + no_frame):
            with pytest.raises(KeyError):
                with v.record(path):
                    raise KeyError("the loop's own")
        v.record(path)
        with pytest.raises(cugl.InvalidStateError, match=no_frame):
            v.close()
        assert v.is_closed and os.listdir(tmp_path) == []
    v = make_viewer(RW, RH)
    v.record(path)
    with pytest.warns(RuntimeWarning, match=no_frame):
        del v
    assert os.listdir(tmp_path) == []


def test_a_full_disk_ends_the_recording_with_the_reason(tmp_path):
    """A link to /dev/full (written in place, as the C test does): the
    present that meets the failure raises it, still presents its frame, and
    ends the recording (or the stop raises it, where no frame met it)."""
    if not os.access("/dev/full", os.W_OK):
        pytest.skip("no writable /dev/full here")
    for suffix in CONTAINERS:
        os.symlink("/dev/full", str(tmp_path / "full") + suffix)
    with make_viewer(320, 240) as v:
        rec, path, _ = record_any(v, tmp_path / "full", kbps=8000)
        failure = None
        for i in range(200):
            picture = image(np.uint8, 4, 240, 320, seed=i)
            try:
                v.show(picture)
            except cugl.InvalidArgumentError as e:
                failure = e
                print("# met by the present of frame %d" % i)
                assert np.array_equal(v.read_pixels(), picture)  # presented all the same
                assert v.recording is None and not rec.is_recording
                break
        if failure is None:
            with pytest.raises(cugl.InvalidArgumentError) as info:
                v.stop_recording()
            failure = info.value
        assert "No space left on device" in str(failure) and path in str(failure)
        v.show(image(np.uint8, 4, 240, 320))  # the viewer goes on
    assert os.path.islink(path)


@pytest.mark.parametrize("suffix", sorted(CONTAINERS))
def test_the_same_frames_make_the_same_bytes(tmp_path, suffix):
    runs = []
    for run in range(2):
        path = str(tmp_path / ("run%d%s" % (run, suffix)))
        with make_viewer(RW, RH) as v:
            with record_or_skip(v, path, keep_every_frame=True, same_bytes=True):
                for i in range(FRAMES):
                    v.show(clip(i))
        with open(path, "rb") as f:
            runs.append(f.read())
    assert len(runs[0]) > 0 and runs[0] == runs[1]


def test_scaled_and_resized_recordings_and_the_wall_clock(tmp_path):
    with make_viewer(RW, RH) as v:
        # Asked for 33 x 25: scaled to it, odd sizes rounded down to even.
        rec, path, codec = record_any(v, tmp_path / "scaled", size=(33, 25), clock="wall",
                                      keep_every_frame=True)
        for i in range(6):
            v.show(clip(i))
            time.sleep(0.02)
        v.stop_recording()
        pts = check_video(path, codec, 6, 32, 24)
        if pts is not None:  # the wall clock: the frames about 20 ms apart
            assert all(b - a >= 0.015 for a, b in zip(pts, pts[1:])), pts
        # The framebuffer resized while recording: scaled to the first frame's size.
        rec, path, codec = record_any(v, tmp_path / "resized", keep_every_frame=True)
        v.show(clip(0))
        v.push_event("resize 80 60")
        v.present()
        v.show(clip(1, 80, 60))
        assert v.size == (80, 60) and v.stop_recording().written == 3
        check_video(path, codec, 3)


def open_files_and_threads():
    return len(os.listdir("/proc/self/fd")), len(os.listdir("/proc/self/task"))


def test_recordings_leave_nothing_behind(tmp_path):
    """Cycles of recordings (finished, refused, and finished without a
    frame) leave cugl's live objects and bytes, the process's open files and
    threads (the recorder's encoder has one) and the folder where they were."""
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("no /proc/self here to count open files and threads by")
    with make_viewer(RW, RH) as v:
        _, path, _ = record_any(v, tmp_path / "cycle")
        v.show(clip(0))
        v.stop_recording()
        missing = str(tmp_path / "missing" / os.path.basename(path))

        def cycle(i):
            with v.record(path, keep_every_frame=True):
                v.show(clip(i))
                v.show(clip(i + 1))
            with pytest.raises(cugl.InvalidArgumentError):
                v.record(missing)
            v.record(path)
            with pytest.raises(cugl.InvalidStateError):
                v.stop_recording()

        cycle(0)  # warm up: what is made once and kept is no leak
        gc.collect()
        before = (cugl.live_objects(), cugl.live_bytes(), open_files_and_threads(),
                  sorted(os.listdir(tmp_path)))
        for i in range(40):
            cycle(i)
        gc.collect()
        after = (cugl.live_objects(), cugl.live_bytes(), open_files_and_threads(),
                 sorted(os.listdir(tmp_path)))
    assert after == before


# --- the README and the example that runs here -----------------------------------------------


def readme_blocks():
    """The fenced Python blocks of python/README.md, in order, as lines."""
    text = open(os.path.join(PYTHON_DIR, "README.md")).read()
    return [b.split("\n", 1)[1].rstrip("\n").splitlines()
            for b in text.split("```")[1::2] if b.startswith("python")]


def test_readme_starts_with_numpy_then_a_notebook_then_the_gpu():
    text = open(os.path.join(PYTHON_DIR, "README.md")).read()
    assert text.split("```", 1)[0].strip() == "# cugl for Python"
    numpy_way, notebook, gpu = readme_blocks()[:3]
    assert len(numpy_way) == 4 and "numpy" in numpy_way[0] and ".show(" in numpy_way[3]
    assert numpy_way[2] == "while not v.should_close:"
    # From an installed package to a live picture in a cell: 5 lines at most.
    assert len(notebook) <= 5 and notebook[2] == "v" and "headless=True" in notebook[1]
    assert len(gpu) == 5 and ".frame()" in gpu[3] and "from_dlpack" in gpu[4]


def test_the_readmes_first_block_runs_and_ctrl_c_ends_it():
    """The first block as it is, in a process of its own (no display:
    headless), until Ctrl-C: the loop ends and the program exits 0."""
    block = "\n".join(readme_blocks()[0])
    # Says when its viewer is presenting, then runs the block unchanged.
    wrapper = textwrap.dedent("""
        import cugl
        show, shows = cugl.Viewer.show, [0]
        def counted(self, *args, **kwargs):
            show(self, *args, **kwargs)
            shows[0] += 1
            if shows[0] == 5:
                print("presenting", flush=True)
        cugl.Viewer.show = counted
    """) + block + "\nprint('ended after', shows[0], flush=True)\n"
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "-c", wrapper], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    first = proc.stdout.readline()
    if first != "presenting\n":
        out, err = proc.communicate(timeout=60)
        if "no EGL" in err:
            pytest.skip(err.strip().splitlines()[-1])
        raise AssertionError((first, out, err))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.startswith("ended after ") and "Traceback" not in err


def test_the_numpy_example_runs_headless():
    script = os.path.join(PYTHON_DIR, "examples", "wave_numpy.py")
    out = subprocess.run([sys.executable, script, "--headless", "--frames", "20",
                          "--size", "96x64", "--poke", "30,20"], capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0 and "no EGL" in out.stderr:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("wave_numpy: 20 frames,"), out.stdout
    # The poke (pushed mouse events) moved the water.
    energy = float(out.stdout.split("field energy ")[1].split()[0])
    assert energy > 0, out.stdout


# --- libcugl-app's notices: Python warnings (cugl.AppNotice) ------------------------


def notices(caught):
    return [str(w.message) for w in caught if issubclass(w.category, cugl.AppNotice)]


def test_gl_debug_output_comes_as_warnings():
    bad = 0xFFFFFFFF  # no buffer bits: GL_INVALID_VALUE
    with make_viewer() as plain:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            plain._res.gl.glClear(bad)  # no debug context: no debug output
        _app_lib.load().cugl_app_drain_gl_errors()
        assert notices(caught) == []
    with make_viewer(debug=True) as v:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            v._res.gl.glClear(bad)
        _app_lib.load().cugl_app_drain_gl_errors()
        said = notices(caught)
        assert len(said) == 1, [str(w.message) for w in caught]
        assert said[0].startswith("cugl GL error (type 0x824c): ")
        assert "GL_INVALID_VALUE" in said[0]
        w = [w for w in caught if issubclass(w.category, cugl.AppNotice)][0]
        assert issubclass(w.category, UserWarning) and w.filename == "libcugl-app"
        # An error filter cannot raise through C: the exception goes to
        # sys.unraisablehook, and the call goes on.
        unraisable = []
        hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", cugl.AppNotice)
                v._res.gl.glClear(bad)
        finally:
            sys.unraisablehook = hook
        _app_lib.load().cugl_app_drain_gl_errors()
        assert [type(u.exc_value) for u in unraisable] == [cugl.AppNotice]
        assert "GL_INVALID_VALUE" in str(unraisable[0].exc_value)
        v.show(image(np.uint8, 4))  # usable after
        assert (v.read_pixels() == image(np.uint8, 4)).all()


def installed_callback(app):
    """The message callback libcugl-app has now (its address), left in place."""
    previous, data = c_void_p(), c_void_p()
    app.cugl_app_set_message_callback(None, None, byref(previous), byref(data))
    app.cugl_app_set_message_callback(previous, data, None, None)
    return previous.value


def test_notices_from_threads_python_never_saw():
    app = _app_lib.load()
    callback = installed_callback(app)
    assert callback == _notices.address()  # set when the package loaded libcugl-app
    # The frame server's encoders call it on threads of libcugl-app's own:
    # here threads of C's (notice_threads.c), all at once.
    helper = ctypes.CDLL(os.environ["CUGL_TEST_NOTICE_THREADS"])
    helper.notices_from_threads.argtypes = [c_void_p, c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                            ctypes.c_int]
    texts = [b"cugl_app_server: notice %d of a thread of C's" % i for i in range(8)]
    messages = (ctypes.c_char_p * len(texts))(*texts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert helper.notices_from_threads(callback, None, messages, len(texts)) == 0
    assert sorted(notices(caught)) == sorted(t.decode() for t in texts)


def test_a_programs_own_notice_callback_is_left_in_place():
    app = _app_lib.load()
    seen = []
    own = _notices.MESSAGE_CALLBACK(lambda message, data: seen.append(message))
    previous = c_void_p()
    app.cugl_app_set_message_callback(own, None, byref(previous), None)
    try:
        assert previous.value == _notices.address()
        assert not _notices.install(app)  # the program's stays
        assert installed_callback(app) == ctypes.cast(own, c_void_p).value
    finally:
        app.cugl_app_set_message_callback(previous, None, None, None)
    assert _notices.install(app) and installed_callback(app) == _notices.address()
