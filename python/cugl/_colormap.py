"""The colour map one-channel images are drawn through: 256 RGBA8 entries,
and the formula that picks one for a value.

    t = clamp((v - vmin) * scale, 0, 1), scale = 1 / (vmax - vmin)   (float32;
        NaN counts as vmin)
    index = int(t * 255 + 0.5)
    colour = table[index]

Host arrays are mapped here with NumPy; device memory by the viewer's GL
program (_gl.py) with the same table and the same float32 arithmetic.
"""

NAMES = ("cugl", "grey")

# Their tables are libcugl-app's (cugl_app_colormap_table, cugl/app_draw.h:
# the maps its drawers colour with), read once each.
_C_MAPS = {"cugl": 0, "grey": 1}  # cugl_app_colormap
_TABLES = {}


def _from_library(name):
    import ctypes
    from . import _app_lib
    entries = (ctypes.c_uint8 * 1024)()
    _app_lib.load().cugl_app_colormap_table(_C_MAPS[name], entries)
    return tuple(tuple(entries[4 * i:4 * i + 4]) for i in range(256))


def table(cmap="cugl"):
    """The 256 (r, g, b, a) entries of a colour map: a name of NAMES, or
    256 entries given as rows of 3 or 4 ints from 0 to 255 (a NumPy
    (256, 3) or (256, 4) uint8 array will do)."""
    if isinstance(cmap, str):
        if cmap not in _C_MAPS:
            raise ValueError("colour map %r is none of %s (or give 256 rows of r, g, b[, a])"
                             % (cmap, ", ".join(NAMES)))
        if cmap not in _TABLES:
            _TABLES[cmap] = _from_library(cmap)
        return _TABLES[cmap]
    rows = [tuple(int(c) for c in row) for row in cmap]
    if len(rows) != 256 or any(len(r) not in (3, 4) for r in rows) or any(
            not 0 <= c <= 255 for r in rows for c in r):
        raise ValueError("a colour map is 256 rows of 3 or 4 ints from 0 to 255")
    return tuple(r if len(r) == 4 else r + (255,) for r in rows)


def words(cmap="cugl"):
    """The table as 256 little-endian RGBA8 words (the GL program's buffer)."""
    return b"".join(bytes(entry) for entry in table(cmap))


def default_range(dtype_name):
    """(vmin, vmax) where none is given: a uint8's whole range, else 0 .. 1."""
    return (0.0, 255.0) if dtype_name == "uint8" else (0.0, 1.0)


def scale_of(vmin, vmax):
    """The float32 factor of the formula (what the GL program gets too)."""
    import struct
    if not vmax > vmin:
        raise ValueError("vmax (%r) must be greater than vmin (%r)" % (vmax, vmin))
    return struct.unpack("f", struct.pack("f", 1.0 / (vmax - vmin)))[0]


def colormap(values, vmin=None, vmax=None, cmap="cugl"):
    """An (..., 4) uint8 NumPy array: each value of `values` (a host array of
    any real dtype) mapped as this module's formula says. vmin, vmax: the
    values drawn as the first and last entries (default: 0 and 255 for
    uint8, else 0 and 1)."""
    import numpy as np
    v = np.asarray(values)
    lo_default, hi_default = default_range(v.dtype.name)
    lo = np.float32(lo_default if vmin is None else vmin)
    hi = np.float32(hi_default if vmax is None else vmax)
    scale = np.float32(scale_of(float(lo), float(hi)))
    t = (v.astype(np.float32) - lo) * scale
    t = np.where(np.isnan(t), np.float32(0), np.clip(t, np.float32(0), np.float32(1)))
    index = (t * np.float32(255) + np.float32(0.5)).astype(np.intp)
    return np.asarray(table(cmap), dtype=np.uint8)[index]
