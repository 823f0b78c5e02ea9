"""Meshes, lines and points: mesh(), lines() and points() of vertices,
(N, 3) or (N, 4) float32, a scalar a vertex through a colour map or one
colour, and indices ((M, 3) a triangle, (M, 2) a segment) of int32 or
uint32; each copied into a buffer target and drawn by libcugl-app's
drawers (cugl_app_draw_mesh, _lines, _line_strip, _points; cugl/app_draw.h)."""
from ctypes import c_float

from .._app_structs import COLORMAP, SHADING, AppMeshDesc, AppVolumeDesc
from .._structs import Layout
from .._tensor import Tensor, import_tensor
from .context import _BUFFER, _R32F, _VOLUME
from .drawing import _mesh_drawer, _overlays, _volume_drawer


def _as(src, names, what, who, host_float64=False):
    """`src`, its dtype one of `names`; host float64 made float32 where
    asked. Refused otherwise (src closed)."""
    name = src.name
    if host_float64 and name == "float64" and src.device_id < 0:
        import numpy as np
        a = src.numpy().astype(np.float32)
        src.close()
        return import_tensor(a)
    if name not in names:
        src.close()
        raise TypeError("Viewer.%s: %s are %s, not %s" % (who, what, " or ".join(names), name))
    return src


def _matrix(matrix, who):
    if matrix is None:
        return None
    rows = [[float(v) for v in row] for row in matrix]
    if len(rows) != 4 or any(len(r) != 4 for r in rows):
        raise ValueError("Viewer.%s: matrix is 4x4" % who)
    return (c_float * 16)(*[rows[r][c] for c in range(4) for r in range(4)])


# What each call draws: vertices an element given by indices (0: none
# taken), and the C call (its desc, vertices, the count of elements, an
# argument of its own, the matrix).
_KINDS = {
    "mesh": (3, lambda app, d, n, k, arg, m: app.cugl_app_draw_mesh(d, n, k, m)),
    "lines": (2, lambda app, d, n, k, arg, m: app.cugl_app_draw_lines(d, n, k, m)),
    "strip": (0, lambda app, d, n, k, arg, m: app.cugl_app_draw_line_strip(d, n, m)),
    "points": (0, lambda app, d, n, k, arg, m: app.cugl_app_draw_points(d, n, arg, m)),
}


class _Mesh:
    """Viewer's meshes, lines and points."""

    def mesh(self, positions, scalars=None, indices=None, *, vmin=None, vmax=None,
             cmap="cugl", color=(1.0, 1.0, 1.0, 1.0), shading="flat", matrix=None,
             colorbar=False, title=None):
        """Draw a triangle mesh and present.

        positions: (N, 3) or (N, 4) float32 (host memory: float64 too),
        x, y, z[, w] each transformed by `matrix` (a 4x4 M applied as
        M @ (x, y, z, 1); None: clip space as given).
        scalars: None, or N floats (float32; host float64 too), each
        vertex's value, drawn through the colour map `cmap` ("cugl" or
        "grey") from `vmin` to `vmax` (default 0 .. 1; NaN draws as vmin);
        without, the mesh is `color` (r, g, b, a from 0 to 1).
        indices: None (vertices 3i, 3i + 1, 3i + 2 make triangle i), or
        (M, 3) int32 or uint32, three vertices a triangle; a triangle with
        an index past the vertices is not drawn.
        shading: "flat" (each face lit by its normal against a light at
        the eye) or "none".
        Any array cugl.from_dlpack takes, in host or device memory; each is
        copied into a buffer target (one copy), drawn depth-tested.
        colorbar: True draws the colour map from vmin to vmax at the right,
        with its values; title: a line of text at the top left (both drawn
        by libcugl-app: cugl_app_draw_colorbar, cugl_app_draw_text).
        """
        self._vertices("mesh", "mesh", positions, scalars, indices, vmin, vmax, cmap, color,
                       shading, matrix, None, colorbar, title)

    def lines(self, positions, scalars=None, indices=None, *, strip=False, vmin=None,
              vmax=None, cmap="cugl", color=(1.0, 1.0, 1.0, 1.0), matrix=None,
              colorbar=False, title=None):
        """Draw line segments, one pixel wide, and present: as mesh() takes
        them, with indices (M, 2), two vertices a segment (None: vertices
        2i and 2i + 1), or with `strip` one line through the vertices in
        order (no indices); coloured along each by the scalars, unlit."""
        self._vertices("lines", "strip" if strip else "lines", positions, scalars, indices,
                       vmin, vmax, cmap, color, "none", matrix, None, colorbar, title)

    def points(self, positions, scalars=None, *, size=2.0, vmin=None, vmax=None,
               cmap="cugl", color=(1.0, 1.0, 1.0, 1.0), matrix=None, colorbar=False,
               title=None):
        """Draw points, squares `size` pixels a side, each its scalar's
        colour (or `color`), depth-tested, and present; as mesh() takes
        them (no indices)."""
        self._vertices("points", "points", positions, scalars, None, vmin, vmax, cmap, color,
                       "none", matrix, float(size), colorbar, title)

    def _vertices(self, who, kind, positions, scalars, indices, vmin, vmax, cmap, color,
                  shading, matrix, arg, colorbar, title):
        per, call = _KINDS[kind]
        if shading not in SHADING:
            raise ValueError("Viewer.%s: shading is %s, not %r"
                             % (who, " or ".join(SHADING), shading))
        if cmap not in COLORMAP:
            raise ValueError("Viewer.%s: cmap is %s, not %r" % (who, " or ".join(COLORMAP), cmap))
        if len(color) != 4:
            raise ValueError("Viewer.%s: color is (r, g, b, a), 4 numbers from 0 to 1" % who)
        if title is not None and not isinstance(title, str):
            raise TypeError("Viewer.%s: title is a str, not %s" % (who, type(title).__name__))
        if indices is not None and not per:
            raise ValueError("Viewer.%s: %s take no indices" % (who, "a strip's vertices"
                                                                 if kind == "strip" else kind))
        m = _matrix(matrix, who)
        self._enter(who, draws=True)
        stream = self._res.stream if self._res.stream is not None else -1
        srcs = []
        try:
            pos = _as(import_tensor(positions, stream), ("float32",), "positions", who, True)
            srcs.append(pos)
            if len(pos.shape) != 2 or pos.shape[1] not in (3, 4):
                raise ValueError("Viewer.%s: positions are (N, 3) or (N, 4); these have "
                                 "shape %s" % (who, pos.shape))
            vertices, components = pos.shape
            desc = AppMeshDesc(components=components, colormap=COLORMAP[cmap],
                               shading=SHADING[shading],
                               vmin=0.0 if vmin is None else float(vmin),
                               vmax=1.0 if vmax is None else float(vmax))
            desc.rgba[:] = [float(c) for c in color]
            parts = [("mesh-positions", vertices * components * 4, "positions", pos)]
            if scalars is not None:
                sc = _as(import_tensor(scalars, stream), ("float32",), "scalars", who, True)
                srcs.append(sc)
                if tuple(sc.shape) not in ((vertices,), (vertices, 1)):
                    raise ValueError("Viewer.%s: %d positions want %d scalars; these have "
                                     "shape %s" % (who, vertices, vertices, sc.shape))
                parts.append(("mesh-scalars", vertices * 4, "scalars", sc))
            if indices is None:
                count = vertices // per if per else vertices
            else:
                ix = _as(import_tensor(indices, stream), ("int32", "uint32"), "indices", who)
                srcs.append(ix)
                if len(ix.shape) != 2 or ix.shape[1] != per:
                    raise ValueError("Viewer.%s: indices are (M, %d); these have shape %s"
                                     % (who, per, ix.shape))
                count = ix.shape[0]
                parts.append(("mesh-indices", count * per * 4, "indices", ix))
            roles = {}
            for role, size, field, src in parts:  # each copied in, or (no elements) let go
                if size == 0:
                    srcs.remove(src)
                    src.close()
                    continue
                t = self._target(role, _BUFFER, size=size)
                srcs.remove(src)  # _copy_in's from here, closed by it where it fails
                self._copy_in(t, src)
                roles[field] = role
        except BaseException:
            for s in srcs:
                s.close()
            raise
        if "positions" not in roles:
            count = 0  # no vertices: nothing to draw
        overlays = _overlays(self._res, colorbar, title, desc.colormap, desc.vmin, desc.vmax)
        draw = _mesh_drawer(self._res, desc, roles, call, vertices, count, arg, m, overlays)
        self._draw = draw
        self._finish(draw)

    def volume(self, values, *, box=None, vmin=None, vmax=None, cmap="cugl", density=0.05,
               steps=256, matrix=None, colorbar=False, title=None):
        """Draw a volume and present: `values` (D, H, W) float32 (host
        memory: float64 too), value [z, y, x], filling `box` ((x0, y0, z0),
        (x1, y1, z1); None: -1 .. 1 each), each pixel's ray through
        `matrix` sampled `steps` times along the box's diagonal, each sample
        through the colour map from vmin (transparent) to vmax with an
        opacity of t * `density`; blended over a cleared picture. Copied
        into a volume target (one copy); colorbar and title as mesh()'s."""
        if cmap not in COLORMAP:
            raise ValueError("Viewer.volume: cmap is %s, not %r" % (" or ".join(COLORMAP), cmap))
        if title is not None and not isinstance(title, str):
            raise TypeError("Viewer.volume: title is a str, not %s" % type(title).__name__)
        lo, hi = ((-1.0,) * 3, (1.0,) * 3) if box is None else box
        if len(lo) != 3 or len(hi) != 3:
            raise ValueError("Viewer.volume: box is ((x0, y0, z0), (x1, y1, z1))")
        m = _matrix(matrix, "volume")
        self._enter("volume", draws=True)
        stream = self._res.stream if self._res.stream is not None else -1
        src = _as(import_tensor(values, stream), ("float32",), "values", "volume", True)
        try:
            if len(src.shape) != 3 or 0 in src.shape:
                raise ValueError("Viewer.volume: values are (D, H, W), none of them 0; these "
                                 "have shape %s" % (src.shape,))
            depth, height, width = src.shape
            desc = AppVolumeDesc(colormap=COLORMAP[cmap], vmin=0.0 if vmin is None else vmin,
                                 vmax=1.0 if vmax is None else vmax, density=float(density),
                                 steps=int(steps))
            desc.min[:] = [float(c) for c in lo]
            desc.max[:] = [float(c) for c in hi]
            one = _with_channel_axis(src)  # (D, H, W, 1): the target's shape
        except BaseException:
            src.close()
            raise
        src.close()  # its memory held by `one`'s view
        t = self._target("volume", _VOLUME, _R32F, width, height, depth=depth)
        self._copy_in(t, one)
        overlays = _overlays(self._res, colorbar, title, desc.colormap, desc.vmin, desc.vmax)
        draw = _volume_drawer(self._res, desc, m, overlays)
        self._draw = draw
        self._finish(draw)


def _with_channel_axis(src):
    """`src` (D, H, W) as a Tensor of (D, H, W, 1) over the same memory."""
    layout = src.view._layout()
    ndim = layout.ndim
    out = Layout(ndim=ndim + 1, itemsize=layout.itemsize, slice_offset=layout.slice_offset)
    for i in range(ndim):
        out.shape[i], out.strides[i] = layout.shape[i], layout.strides[i]
    out.shape[ndim], out.strides[ndim] = 1, 1
    return Tensor(src.obj, src.view._with_layout(out), True, src.stream)
