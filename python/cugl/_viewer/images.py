"""Images: show() (an image here, a point set through points.py), the
copy of a source into a target, the colour map (host memory through NumPy,
device memory through the viewer's GL program) and cugl.colormap."""
from .. import _app_lib
from .. import _colormap
from .._lib import load
from .._tensor import import_tensor
from .._view import StridedMemoryView
from .context import _BUFFER, _FORMAT_OF, _IMAGE, _MAX_PENDING, _PROGRAM_TYPE
from .drawing import _image_drawer, _program_drawer


class _Images:
    """Viewer's show() and its images."""

    def _copy_in(self, target, src):
        """One copy of `src` (a _tensor.Tensor) into `target`
        (cugl_app_target_copy_from). A source of device memory is held until
        the viewer's stream has run the copy (its producer may free it as
        soon as we let go); a view src.owned is ours to close, else the
        caller's (a reference of our own is held)."""
        res = self._res
        view = src.view
        stream = res.stream._ptr if res.stream is not None else None
        try:
            _app_lib.load().cugl_app_target_copy_from(target, view._ptr, stream)
        except BaseException:
            src.close()
            raise
        self.copies += 1
        if res.stream is None:
            src.close()  # without a device the copy is done
            return
        if not src.owned:
            view = StridedMemoryView._wrap(load().cugl_view_retain(view._ptr),
                                           view._exporting_obj, view._stream)
        res.retire()
        event = res.free_events.pop() if res.free_events else self._device.create_event()
        res.stream.record(event)
        res.pending.append((event, view))
        if len(res.pending) > _MAX_PENDING:
            event, old = res.pending.popleft()
            event.sync()
            old.close()
            res.free_events.append(event)

    # --- show ----------------------------------------------------------------------------

    def show(self, x, *, vmin=None, vmax=None, cmap="cugl", origin="upper", points=None,
             point_size=2.0, color=(1.0, 1.0, 1.0, 1.0), matrix=None):
        """Draw `x` and present.

        x: any object with __dlpack__ or __cuda_array_interface__, or a
        NumPy array (anything cugl.from_dlpack takes), in host or device
        memory:

          an image, (H, W, C) with C 1, 3 or 4 (or (H, W): one channel) of
          uint8, float16 or float32 (host memory: float64 too, as float32),
          floats clamped to 0 .. 1, drawn over the whole framebuffer
          (nearest), row 0 at the top where `origin` is "upper" (the
          default: NumPy's, image files' and matplotlib's imshow's way) or
          at the bottom where it is "lower" (GL's, and cugl's C API
          cugl_app_target_draw; frame() hands GL's own memory, row 0 at the
          bottom). Either way the draw reads the rows in order: no copy
          is made to turn the picture over.
          4 channels are copied as they are (one copy, from any strides)
          into an image target (RGBA8, RGBA16F, RGBA32F) that libcugl-app
          draws. 3 channels are drawn opaque, and 1 channel through the
          colour map `cmap` between `vmin` and `vmax` (default 0 .. 255 for
          uint8, else 0 .. 1; see cugl.colormap): host memory is made RGBA
          with NumPy and then copied; device memory is copied as it is into
          a buffer target (one copy) that the viewer's GL program draws the
          same way (cugl/_gl.py says how);

          a point set, (N, 3) or (N, 4) float32 (x, y, z[, w] in clip space,
          each transformed by `matrix`, a 4x4 M applied as M @ (x, y, z, 1)):
          copied into a buffer target and drawn as `point_size`-pixel
          squares of `color` (r, g, b, a from 0 to 1). `points`: None: a
          2-D float array of 3 or 4 columns is a point set; True or False
          say which.

        Device memory is read on the viewer's stream after its producer's
        work (DLPack's stream handshake) and held until the copy has run.
        """
        _check_origin(origin)  # before _enter: a refused call changes nothing
        self._enter("show", draws=True)
        src = import_tensor(x, self._res.stream if self._res.stream is not None else -1)
        try:
            shape = src.shape
            if points is None:
                points = (len(shape) == 2 and shape[1] in (3, 4) and
                          src.name in ("float32", "float64"))
            if points:
                draw = self._points(src, point_size, color, matrix)
            else:
                draw = self._image(src, vmin, vmax, cmap, origin)
        except BaseException:
            src.close()
            raise
        self._draw = draw
        self._finish(draw)

    def _image(self, src, vmin, vmax, cmap, origin):
        shape = src.shape
        if len(shape) == 2:
            shape = shape + (1,)
        if len(shape) != 3 or shape[2] not in (1, 3, 4):
            raise ValueError("Viewer.show: an image is (height, width, 1, 3 or 4 channels) or "
                             "(height, width); this array has shape %s" % (src.shape,))
        height, width, channels = shape
        name = src.name
        res = self._res
        if channels == 4 and name in _FORMAT_OF:
            t = self._target("image", _IMAGE, _FORMAT_OF[name], width, height)
            self._copy_in(t, src)
            return _image_drawer(res, origin)
        if src.device_id >= 0:
            if name not in _PROGRAM_TYPE:
                raise TypeError("Viewer.show: device memory of %s; images are uint8, float16 "
                                "or float32" % name)
            return self._program_image(src, height, width, channels, name, vmin, vmax, cmap,
                                       origin)
        # Host memory: made RGBA with NumPy, then one copy.
        import numpy as np
        a = src.numpy().reshape(height, width, channels)
        if channels == 1:
            rgba = _colormap.colormap(a[..., 0], vmin, vmax, cmap)
        else:
            if name == "float64":
                a = a.astype(np.float32)
                name = "float32"
            if name not in _FORMAT_OF:
                raise TypeError("Viewer.show: an image of 3 or 4 channels is uint8, float16, "
                                "float32 or (host memory) float64, not %s" % name)
            if channels == 3:
                rgba = np.empty((height, width, 4), a.dtype)
                rgba[..., :3] = a
                rgba[..., 3] = 255 if name == "uint8" else 1
            else:
                rgba = a
        src.close()  # what is copied is rgba
        t = self._target("image", _IMAGE, _FORMAT_OF[rgba.dtype.name], width, height)
        self._copy_in(t, import_tensor(rgba))
        return _image_drawer(res, origin)

    def _program_image(self, src, height, width, channels, name, vmin, vmax, cmap, origin):
        """Device memory of 1 or 3 channels (and, for the tests, host
        memory): copied as it is into a buffer target, drawn by the viewer's
        GL program (cugl/_gl.py)."""
        itemsize = {"uint8": 1, "float16": 2, "float32": 4}[name]
        nbytes = height * width * channels * itemsize
        size = (nbytes + 3) // 4 * 4
        t = self._target("program", _BUFFER, size=size)
        self._copy_in(t, src)
        if channels == 1:
            lo_default, hi_default = _colormap.default_range(name)
            lo = lo_default if vmin is None else float(vmin)
            scale = _colormap.scale_of(lo, hi_default if vmax is None else float(vmax))
            words = _colormap.words(cmap)
        else:
            lo, scale = 0.0, (_colormap.scale_of(0.0, 255.0) if name == "uint8" else 1.0)
            words = None
        return _program_drawer(self._res, (width, height, channels, _PROGRAM_TYPE[name], lo,
                                           scale, origin == "upper"), words)

    def _show_through_program(self, a, vmin=None, vmax=None, cmap="cugl", origin="upper"):
        """show() of a host array of 1 or 3 channels the way device memory
        goes (a buffer target and the viewer's GL program): how the tests
        check that program where there is no CUDA device. The bytes are
        padded to a multiple of 4 (a buffer target without a device takes
        exactly its size)."""
        import numpy as np
        _check_origin(origin)
        self._enter("show", draws=True)
        a = np.ascontiguousarray(a)
        height, width = a.shape[:2]
        channels = a.shape[2] if a.ndim == 3 else 1
        flat = a.reshape(-1).view(np.uint8)
        padded = np.zeros((flat.size + 3) // 4 * 4, np.uint8)
        padded[:flat.size] = flat
        draw = self._program_image(import_tensor(padded), height, width, channels,
                                   a.dtype.name, vmin, vmax, cmap, origin)
        self._draw = draw
        self._finish(draw)


def _check_origin(origin):
    if origin not in ("upper", "lower"):
        raise ValueError("Viewer.show: origin %r is neither 'upper' (row 0 at the top) nor "
                         "'lower' (row 0 at the bottom)" % (origin,))


def colormap(values, vmin=None, vmax=None, cmap="cugl"):
    """The colours show() draws a one-channel image with: an (..., 4) uint8
    NumPy array, each value v mapped to table[int(t * 255 + 0.5)] where
    t = clamp((v - vmin) / (vmax - vmin), 0, 1) in float32 (NaN: 0); vmin,
    vmax default to 0 and 255 for uint8, else 0 and 1; cmap is "cugl" (dark
    to light), "grey", or 256 rows of r, g, b[, a]."""
    return _colormap.colormap(values, vmin, vmax, cmap)


def colormap_table(cmap="cugl"):
    """The 256 (r, g, b, a) entries of a colour map (ints 0 .. 255), for
    applying it with an array library of one's own (as colormap() does
    with NumPy): entry int(t * 255 + 0.5) for t in 0 .. 1."""
    return _colormap.table(cmap)
