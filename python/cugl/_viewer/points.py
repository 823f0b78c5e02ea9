"""Points: show() of a point set, (N, 3) or (N, 4) float32 in clip space,
copied into a buffer target and drawn as squares of one colour."""
from ctypes import c_float

from .._tensor import import_tensor
from .context import _BUFFER
from .drawing import _nothing, _points_drawer


class _Points:
    """Viewer's point sets (show() with points)."""

    def _points(self, src, point_size, color, matrix):
        shape = src.shape
        if len(shape) != 2 or shape[1] not in (3, 4):
            raise ValueError("Viewer.show: a point set is (N, 3) or (N, 4); this array has "
                             "shape %s" % (shape,))
        count, components = shape
        name = src.name
        if len(color) != 4:
            raise ValueError("Viewer.show: color is (r, g, b, a), 4 numbers from 0 to 1")
        rgba = (c_float * 4)(*[float(c) for c in color])
        m = None
        if matrix is not None:
            rows = [[float(v) for v in row] for row in matrix]
            if len(rows) != 4 or any(len(r) != 4 for r in rows):
                raise ValueError("Viewer.show: matrix is 4x4")
            m = (c_float * 16)(*[rows[r][c] for c in range(4) for r in range(4)])
        if name == "float64" and src.device_id < 0:
            import numpy as np
            a = src.numpy().astype(np.float32)
            src.close()
            src, name = import_tensor(a), "float32"
        if name != "float32":
            raise TypeError("Viewer.show: points are float32 (host memory: float64 too), "
                            "not %s" % name)
        if count == 0:
            src.close()
            return _nothing
        t = self._target("points", _BUFFER, size=count * components * 4)
        self._copy_in(t, src)
        return _points_drawer(self._res, count, components, m, float(point_size), rgba)
