"""Meshes: mesh() of a triangle mesh, positions (N, 3) or (N, 4) float32,
a scalar a vertex through a colour map or one colour, and indices (M, 3)
of int32 or uint32; each copied into a buffer target and drawn by
libcugl-app's mesh drawer (cugl_app_draw_mesh, cugl/app_draw.h)."""
from ctypes import c_float

from .._app_structs import COLORMAP, SHADING, AppMeshDesc
from .._tensor import import_tensor
from .context import _BUFFER
from .drawing import _mesh_drawer


def _as(src, names, what, host_float64=False):
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
        raise TypeError("Viewer.mesh: %s are %s, not %s" % (what, " or ".join(names), name))
    return src


def _matrix(matrix):
    if matrix is None:
        return None
    rows = [[float(v) for v in row] for row in matrix]
    if len(rows) != 4 or any(len(r) != 4 for r in rows):
        raise ValueError("Viewer.mesh: matrix is 4x4")
    return (c_float * 16)(*[rows[r][c] for c in range(4) for r in range(4)])


class _Mesh:
    """Viewer's meshes."""

    def mesh(self, positions, scalars=None, indices=None, *, vmin=None, vmax=None,
             cmap="cugl", color=(1.0, 1.0, 1.0, 1.0), shading="flat", matrix=None):
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
        """
        if shading not in SHADING:
            raise ValueError("Viewer.mesh: shading is %s, not %r" % (" or ".join(SHADING), shading))
        if cmap not in COLORMAP:
            raise ValueError("Viewer.mesh: cmap is %s, not %r" % (" or ".join(COLORMAP), cmap))
        if len(color) != 4:
            raise ValueError("Viewer.mesh: color is (r, g, b, a), 4 numbers from 0 to 1")
        m = _matrix(matrix)
        self._enter("mesh", draws=True)
        stream = self._res.stream if self._res.stream is not None else -1
        srcs = []
        try:
            pos = _as(import_tensor(positions, stream), ("float32",), "positions", True)
            srcs.append(pos)
            if len(pos.shape) != 2 or pos.shape[1] not in (3, 4):
                raise ValueError("Viewer.mesh: positions are (N, 3) or (N, 4); these have "
                                 "shape %s" % (pos.shape,))
            vertices, components = pos.shape
            desc = AppMeshDesc(components=components, colormap=COLORMAP[cmap],
                               shading=SHADING[shading],
                               vmin=0.0 if vmin is None else float(vmin),
                               vmax=1.0 if vmax is None else float(vmax))
            desc.rgba[:] = [float(c) for c in color]
            parts = [("mesh-positions", vertices * components * 4, "positions", pos)]
            if scalars is not None:
                sc = _as(import_tensor(scalars, stream), ("float32",), "scalars", True)
                srcs.append(sc)
                if tuple(sc.shape) not in ((vertices,), (vertices, 1)):
                    raise ValueError("Viewer.mesh: %d positions want %d scalars; these have "
                                     "shape %s" % (vertices, vertices, sc.shape))
                parts.append(("mesh-scalars", vertices * 4, "scalars", sc))
            if indices is None:
                triangles = vertices // 3
            else:
                ix = _as(import_tensor(indices, stream), ("int32", "uint32"), "indices")
                srcs.append(ix)
                if len(ix.shape) != 2 or ix.shape[1] != 3:
                    raise ValueError("Viewer.mesh: indices are (M, 3); these have shape %s"
                                     % (ix.shape,))
                triangles = ix.shape[0]
                parts.append(("mesh-indices", triangles * 12, "indices", ix))
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
            triangles = 0  # no vertices: nothing to draw
        draw = _mesh_drawer(self._res, desc, roles, vertices, triangles, m)
        self._draw = draw
        self._finish(draw)
