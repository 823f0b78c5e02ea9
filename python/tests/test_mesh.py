"""Viewer.mesh() on any GL (Mesa here: the host path, host memory): each
triangle's pixels the colour map's entry for its scalar, indices, the
depth test, a matrix, one colour, NaN as vmin, nothing for no vertices,
and every refusal (libcugl-app's cugl_app_draw_mesh draws it; its own
pixels are tests/gl/test_draw.c's)."""
import numpy as np
import pytest

import cugl
from test_viewer import H, W, make_viewer

# Two triangles: the left one's scalars 0.5, the right one's 1.
TWO = np.array([[-0.9, -0.9, 0], [-0.1, -0.9, 0], [-0.9, 0.9, 0],
                [0.1, -0.9, 0], [0.9, -0.9, 0], [0.1, 0.9, 0]], np.float32)
HALF_AND_ONE = np.array([0.5] * 3 + [1.0] * 3, np.float32)


@pytest.fixture
def viewer():
    v = make_viewer()
    yield v
    v.close()


def at(px, x, y):
    """The pixel at clip-space (x, y): read_pixels' rows run top to bottom."""
    col, row = int((x * 0.5 + 0.5) * W), int((y * 0.5 + 0.5) * H)
    return tuple(int(c) for c in px[H - 1 - row, col, :3])


def entry(v, cmap="cugl"):
    table = np.asarray(cugl.colormap_table(cmap), np.uint8)
    return tuple(int(c) for c in table[int(min(max(v, 0.0), 1.0) * 255 + 0.5), :3])


def test_each_triangle_in_its_colour(viewer):
    viewer.mesh(TWO, HALF_AND_ONE, shading="none")
    px = viewer.read_pixels()
    assert at(px, -0.7, -0.7) == entry(0.5)
    assert at(px, 0.3, -0.7) == entry(1.0)
    assert at(px, 0.7, 0.7) == (0, 0, 0)  # the clear colour
    # A range and a map of its own; float64 in host memory is taken.
    viewer.mesh(TWO.astype(np.float64), HALF_AND_ONE.astype(np.float64), vmin=0.5, vmax=1.5,
                cmap="grey", shading="none")
    px = viewer.read_pixels()
    assert at(px, -0.7, -0.7) == entry(0.0, "grey")
    assert at(px, 0.3, -0.7) == entry(0.5, "grey")


def test_one_colour_and_shading(viewer):
    viewer.mesh(TWO, color=(1, 0, 0, 1), shading="none")
    assert at(viewer.read_pixels(), 0.3, -0.7) == (255, 0, 0)
    # Facing the eye, shaded: the colour as it is.
    viewer.mesh(TWO, color=(1, 0, 0, 1))
    assert at(viewer.read_pixels(), 0.3, -0.7) == (255, 0, 0)


def test_indices_pick_vertices(viewer):
    quad = np.array([[-0.8, -0.8, 0], [0.8, -0.8, 0], [-0.8, 0.8, 0], [0.8, 0.8, 0]], np.float32)
    ones = np.ones(4, np.float32)
    viewer.mesh(quad, ones, np.array([[0, 1, 2], [2, 1, 3]], np.uint32), shading="none")
    px = viewer.read_pixels()
    assert at(px, -0.6, 0.6) == at(px, 0.6, -0.6) == (255, 255, 255)
    # A triangle with an index past the vertices: nothing drawn.
    viewer.mesh(quad, ones, np.array([[0, 1, 7]], np.int32), shading="none")
    assert (viewer.read_pixels()[..., :3] == 0).all()


def test_the_nearer_shows(viewer):
    far_then_near = TWO.copy()
    far_then_near[3:] = [[-0.9, -0.9, -0.5], [0.9, -0.9, -0.5], [0.0, 0.9, -0.5]]
    far_then_near[:3] = [[-0.9, -0.9, 0.5], [0.9, -0.9, 0.5], [0.0, 0.9, 0.5]]
    viewer.mesh(far_then_near, np.array([1.0] * 3 + [0.25] * 3, np.float32), shading="none")
    assert at(viewer.read_pixels(), 0.0, -0.5) == entry(0.25)


def test_a_matrix_and_nan(viewer):
    mirror = np.diag([-1.0, 1.0, 1.0, 1.0])  # x mirrored: the left triangle lands right
    viewer.mesh(TWO, HALF_AND_ONE, shading="none", matrix=mirror)
    px = viewer.read_pixels()
    assert at(px, 0.7, -0.7) == entry(0.5)
    assert at(px, -0.3, -0.7) == entry(1.0)
    viewer.mesh(TWO, np.full(6, np.nan, np.float32), shading="none")
    assert at(viewer.read_pixels(), -0.7, -0.7) == entry(0.0)


def test_no_vertices_draw_nothing(viewer):
    viewer.mesh(TWO, HALF_AND_ONE)
    viewer.mesh(np.zeros((0, 3), np.float32))
    assert (viewer.read_pixels()[..., :3] == 0).all()
    viewer.mesh(TWO, HALF_AND_ONE, np.zeros((0, 3), np.int32))
    assert (viewer.read_pixels()[..., :3] == 0).all()


@pytest.mark.parametrize("args, kwargs, error, says", [
    ((np.zeros((6, 2), np.float32),), {}, ValueError, "positions are (N, 3) or (N, 4)"),
    ((np.zeros((6, 3), np.int32),), {}, TypeError, "positions are float32"),
    ((TWO, np.zeros(5, np.float32)), {}, ValueError, "6 positions want 6 scalars"),
    ((TWO, np.zeros(6, np.int16)), {}, TypeError, "scalars are float32"),
    ((TWO, None, np.zeros((2, 2), np.int32)), {}, ValueError, "indices are (M, 3)"),
    ((TWO, None, np.zeros((2, 3), np.float32)), {}, TypeError, "indices are int32 or uint32"),
    ((TWO,), {"cmap": "jet"}, ValueError, "cmap is cugl or grey"),
    ((TWO,), {"shading": "smooth"}, ValueError, "shading is flat or none"),
    ((TWO,), {"color": (1, 0, 0)}, ValueError, "color is (r, g, b, a)"),
    ((TWO,), {"matrix": np.eye(3)}, ValueError, "matrix is 4x4"),
    ((TWO, HALF_AND_ONE), {"vmin": 1, "vmax": 1}, cugl.InvalidArgumentError, "vmin below vmax"),
    ((TWO,), {"color": (2, 0, 0, 1)}, cugl.InvalidArgumentError, "rgba[0] is 2"),
])
def test_refusals(viewer, args, kwargs, error, says):
    with pytest.raises(error) as e:
        viewer.mesh(*args, **kwargs)
    assert says in str(e.value)
    # The viewer goes on: a good mesh draws.
    viewer.mesh(TWO, HALF_AND_ONE, shading="none")
    assert at(viewer.read_pixels(), 0.3, -0.7) == entry(1.0)


def centre(x, y):
    """Clip space of pixel (x, y)'s centre, y from the bottom."""
    return (x + 0.5) / W * 2 - 1, (y + 0.5) / H * 2 - 1


def pixel(px, x, y):
    return tuple(int(c) for c in px[H - 1 - y, x, :3])


def test_lines_and_a_strip(viewer):
    seg = np.array([centre(3, 12) + (0,), centre(36, 12) + (0,)], np.float32)
    viewer.lines(seg, np.ones(2, np.float32))
    px = viewer.read_pixels()
    assert all(pixel(px, x, 12) == (255, 255, 255) for x in range(6, 33))
    assert all(pixel(px, x, 10) == (0, 0, 0) for x in range(W))
    # By indices, and one with an index past the vertices: not drawn.
    viewer.lines(seg, None, np.array([[0, 1]], np.int32), color=(0, 1, 0, 1))
    assert pixel(viewer.read_pixels(), 20, 12) == (0, 255, 0)
    viewer.lines(seg, None, np.array([[0, 9]], np.int32))
    assert (viewer.read_pixels()[..., :3] == 0).all()
    # An L through three vertices.
    ell = np.array([centre(3, 4) + (0,), centre(30, 4) + (0,), centre(30, 20) + (0,)],
                   np.float32)
    viewer.lines(ell, strip=True, color=(1, 0, 0, 1))
    px = viewer.read_pixels()
    assert pixel(px, 15, 4) == pixel(px, 30, 12) == (255, 0, 0)
    assert pixel(px, 15, 12) == (0, 0, 0)
    with pytest.raises(ValueError, match="a strip's vertices take no indices"):
        viewer.lines(ell, None, np.array([[0, 1]], np.int32), strip=True)
    with pytest.raises(ValueError, match=r"indices are \(M, 2\)"):
        viewer.lines(ell, None, np.array([[0, 1, 2]], np.int32))


def test_points_in_their_colours(viewer):
    p = np.array([centre(8, 8) + (0,), centre(28, 16) + (0,)], np.float32)
    viewer.points(p, np.array([0.5, 1.0], np.float32), size=3)
    px = viewer.read_pixels()
    assert int((px[..., :3] != 0).any(axis=-1).sum()) == 18
    assert pixel(px, 8, 8) == entry(0.5) and pixel(px, 29, 17) == entry(1.0)
    with pytest.raises(cugl.InvalidArgumentError, match="point size 0"):
        viewer.points(p, size=0)


def test_a_colorbar_and_a_title():
    big = make_viewer(320, 200)
    try:
        p = np.array([[-0.9, -0.9, 0], [0.3, -0.9, 0], [-0.9, 0.9, 0]], np.float32)
        big.mesh(p, np.zeros(3, np.float32), shading="none", vmin=-2, vmax=2)
        plain = big.read_pixels()
        big.mesh(p, np.zeros(3, np.float32), shading="none", vmin=-2, vmax=2, colorbar=True,
                 title="T = 0")
        px = big.read_pixels()
        table = np.asarray(cugl.colormap_table(), np.uint8)
        # The bar: 16 pixels wide, 64 from the right, from a sixth of the
        # height for two thirds of it; its bottom row the map's first
        # entries, its top the last.
        x = 320 - 16 - 64 + 8
        bottom, top = 200 - 1 - 200 // 6, 200 - 1 - (200 // 6 + 200 * 2 // 3 - 1)
        assert tuple(px[bottom, x, :3]) == tuple(table[int(0.5 / 133 * 255 + 0.5), :3])
        assert tuple(px[top, x, :3]) == tuple(table[int(132.5 / 133 * 255 + 0.5), :3])
        assert (plain[:, 240:, :3] == 0).all() and (px[:, 258:, :3] > 128).any()  # labels
        # The title: white pixels at the top left, none there before.
        assert not (plain[:40, :100, :3] > 200).any()
        assert (px[:40, :100, :3] > 200).any()
        with pytest.raises(TypeError, match="title is a str"):
            big.mesh(p, title=3)
    finally:
        big.close()


def half_volume():
    v = np.zeros((4, 4, 4), np.float32)
    v[:, :, :2] = 1  # value [z, y, x]: 1 where x is 0 or 1
    return v


def test_a_volume(viewer):
    box = ((-0.5, -0.5, -0.5), (0.5, 0.5, 0.5))
    viewer.volume(half_volume(), box=box, density=1)
    px = viewer.read_pixels()
    assert at(px, -0.3, 0) == entry(1.0)
    assert at(px, 0.3, 0) == (0, 0, 0) and at(px, -0.3, 0.8) == (0, 0, 0)
    # Strided, float64 (host), default box: the left half of the viewport.
    v = np.zeros((4, 8, 4), np.float64)
    v[:, ::2, :2] = 1.0
    viewer.volume(v[:, ::2, :], density=1, title="vol", colorbar=True)
    assert at(viewer.read_pixels(), -0.5, 0) == entry(1.0)
    with pytest.raises(ValueError, match=r"values are \(D, H, W\)"):
        viewer.volume(np.zeros((4, 4), np.float32))
    with pytest.raises(cugl.InvalidArgumentError, match="density 2"):
        viewer.volume(half_volume(), density=2)
    with pytest.raises(ValueError, match="box is"):
        viewer.volume(half_volume(), box=((0, 0), (1, 1)))
