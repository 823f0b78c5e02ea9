"""The live part: a Viewer shows what Python computes, in a window, headless
or in a web browser, over libcugl-app's contexts and targets (what CUDA
writes and GL shows, on whichever interop path works here).

    import cugl, torch
    v = cugl.Viewer(1920, 1080, serve=8080)
    while not v.should_close:
        with v.frame() as img:                      # GL's own memory, no copy
            torch.from_dlpack(img).random_(0, 256)  # leaving the block presents

Every call is a call into libcugl-app through ctypes.CDLL, which releases
the GIL for its duration: no Python lock is held while a frame waits for
the GPU. A viewer is used by the thread that made it (its GL context is
current there).
"""
import collections
import contextlib
import threading
import time
import weakref
from ctypes import (byref, c_bool, c_char_p, c_float, c_int, c_int64, c_size_t, c_uint32,
                    c_void_p, create_string_buffer)

from . import _app_lib
from . import _colormap
from . import _dlpack as dl
from . import _dtypes
from . import _errors
from . import _gl
from ._app_structs import AppAccess, AppContextDesc, AppEvent, AppServerDesc, AppTargetDesc
from ._device import Device, device_count
from ._lib import load
from ._structs import DType, Layout
from ._tensor import import_tensor
from ._view import StridedMemoryView

# cugl_app_mode, cugl_app_target_kind, cugl_app_format (the headers' values)
_AUTO, _WINDOW, _HEADLESS = 0, 1, 2
_IMAGE, _BUFFER = 0, 1
_RGBA8, _RGBA16F, _RGBA32F = 0, 1, 2
_FORMAT_OF = {"uint8": _RGBA8, "float16": _RGBA16F, "float32": _RGBA32F}
_PROGRAM_TYPE = {"uint8": _gl.TYPE_UINT8, "float16": _gl.TYPE_FLOAT16,
                 "float32": _gl.TYPE_FLOAT32}
# cugl_app_interop: CUGL_APP_INTEROP_LIST's names (cugl_app_interop_name says them too)
_INTEROP = {"auto": 0, "map": 1, "shared": 2, "host": 3}

_EVENT_TYPES = ("move", "button", "scroll", "key", "resize", "close")
_BUTTONS = ("left", "right", "middle")

# How many shows may hold their source before the oldest is waited for.
_MAX_PENDING = 8


class _Current(threading.local):
    ctx = None  # the context this package made current on this thread last


_current = _Current()


def _cuda_device_count():
    """CUDA devices here; 0 where there is no driver."""
    try:
        return device_count()
    except _errors.NoDriverError:
        return 0


Input = collections.namedtuple("Input", "x y dx dy scroll left right middle shift ctrl")
Input.__doc__ = """A frame's input state (cugl_app_input): the cursor in pixels from the
top left, its motion and the wheel's steps since the previous present, the
mouse buttons and the Shift and Control keys held."""


class InputEvent:
    """One input event of a frame, with the names of cugl's input-replay
    format (one event a line: `<frame> move <x> <y>`, `button <left|right|
    middle> <down|up>`, `scroll <steps>`, `key <key> <down|up>`, `resize
    <width> <height>`, `close`).

    type: "move", "button", "scroll", "key", "resize" or "close"
    frame: the frame whose input first holds it
    x, y: move: the cursor, pixels from the top left
    button: button: "left", "right" or "middle"
    key: key: the format's word ("A", "7", "escape", "left_shift", ...);
        code: its key code (GLFW's, as cugl's)
    down: button, key: pressed (True) or released
    steps: scroll: wheel steps, positive away from the user
    width, height: resize: the framebuffer's new size
    str(event) is its line of the format; InputEvent.parse(line) reads one.
    """

    __slots__ = ("type", "frame", "x", "y", "code", "down", "width", "height", "_line")

    @classmethod
    def _from_c(cls, c):
        e = cls.__new__(cls)
        e.type = _EVENT_TYPES[c.type]
        e.frame, e.x, e.y, e.code, e.down = c.frame, c.x, c.y, c.code, c.down
        e.width, e.height = c.width, c.height
        e._line = None
        return e

    @classmethod
    def parse(cls, line):
        """The event of one line of the format; the frame may be left out
        (it is then 0)."""
        text = line.strip()
        if text and not (text[0].isdigit() or text[0] == "-"):
            text = "0 " + text
        c = AppEvent()
        _app_lib.load().cugl_app_event_parse(byref(c), text.encode())
        return cls._from_c(c)

    def _c(self):
        return AppEvent(frame=self.frame, type=_EVENT_TYPES.index(self.type), x=self.x,
                        y=self.y, code=self.code, down=self.down, width=self.width,
                        height=self.height)

    def __str__(self):
        if self._line is None:
            c = self._c()
            lib = _app_lib.load()
            n = lib.cugl_app_event_format(None, 0, byref(c))
            if n < 0:
                raise ValueError("not a valid event: %r" % (self,))
            buf = create_string_buffer(n + 1)
            lib.cugl_app_event_format(buf, n + 1, byref(c))
            self._line = buf.value.decode()
        return self._line

    @property
    def button(self):
        return _BUTTONS[self.code] if self.type == "button" else None

    @property
    def key(self):
        return str(self).split()[2] if self.type == "key" else None

    @property
    def steps(self):
        return self.y if self.type == "scroll" else None

    def __eq__(self, other):
        return isinstance(other, InputEvent) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __repr__(self):
        return "InputEvent(%r)" % str(self)


class _FrameView(StridedMemoryView):
    """The memory of a frame() turn: a view whose DLPack exports note the
    consumer's stream, which the turn's stream waits for at its end."""

    _consumers = None

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # The consumer's stream, and the device its 1 or 2 (a default
        # stream) belongs to: the one it was told the memory is on.
        self._consumers.append((stream, self.__dlpack_device__()[1]))
        return super().__dlpack__(stream=stream, max_version=max_version,
                                  dl_device=dl_device, copy=copy)

    def _with_layout(self, layout, dtype=_dtypes.UNTYPED):
        v = super()._with_layout(layout, dtype)
        out = _FrameView._wrap(load().cugl_view_retain(v._ptr), v._exporting_obj, v._stream)
        out._consumers, out._consumer_streams = self._consumers, self._consumer_streams
        v.close()
        return out


# frame()'s Buffers kept a target: more than a pipelined target's slots.
_MAX_FRAME_BUFFERS = 8


class _Target:
    """One cugl_app_target and what it was made for; `buffers`: frame()'s
    Buffers of its memory, by (address, size), made at their first turn
    (a pipelined target turns over a few)."""

    __slots__ = ("ptr", "key", "buffers")

    def __init__(self, ptr, key):
        self.ptr, self.key, self.buffers = ptr, key, {}


class _Resources:
    """Everything a viewer holds, freed once (close(), collection or exit),
    with its context current."""

    def __init__(self):
        self.ctx = None
        self.targets = {}  # role -> _Target
        self.ui = None
        self.server = None
        self.program = 0
        self.vao = 0
        self.lut = 0
        self.lut_words = None
        self.uniforms = None
        self.gl = None
        self.stream = None
        self.pending = collections.deque()  # (cugl.Event, view) of shows whose copy may still run
        self.consumer_streams = {}  # frame()'s consumers' default streams (_interop.default_stream)
        self.free_events = []
        self.freed = False

    def make_current(self):
        if _current.ctx != self.ctx:
            _app_lib.load().cugl_app_context_make_current(self.ctx)
            _current.ctx = self.ctx

    def drop_target(self, role):
        t = self.targets.pop(role, None)
        if t is not None:
            for b in t.buffers.values():
                b.close()
            _app_lib.load().cugl_app_target_destroy(t.ptr)

    def retire(self):
        """Let go of the sources of shows whose copy has run."""
        while self.pending and self.pending[0][0].is_done:
            event, view = self.pending.popleft()
            view.close()
            self.free_events.append(event)

    def free(self):
        if self.freed:
            return
        self.freed = True
        app = _app_lib.load()
        if self.ctx is None:
            return
        try:
            app.cugl_app_context_make_current(self.ctx)
            _current.ctx = self.ctx
        except _errors.CuglError:
            pass  # destroy makes it current itself
        if self.stream is not None:
            try:
                self.stream.sync()
            except _errors.CuglError:
                pass
        for _, view in self.pending:
            view.close()
        self.pending.clear()
        for event in self.free_events:
            event.close()
        self.free_events = []
        for stream in self.consumer_streams.values():
            stream._drop()  # a wrapper: the default stream itself stays
        self.consumer_streams.clear()
        for role in list(self.targets):
            self.drop_target(role)
        if self.ui is not None:
            app.cugl_app_ui_destroy(self.ui)
            self.ui = None
        if self.server is not None:
            app.cugl_app_server_destroy(self.server)
            self.server = None
        if self.gl is not None:
            if self.program:
                self.gl.glDeleteProgram(self.program)
            if self.vao:
                self.gl.delete_vertex_array(self.vao)
            if self.lut:
                self.gl.delete_buffer(self.lut)
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        app.cugl_app_context_destroy(self.ctx)
        self.ctx = None
        _current.ctx = None  # destroy leaves no context current on this thread


class Viewer:
    """A window (where a display is), or a headless GL context, that shows
    images and point sets, optionally served to web browsers.

    Viewer(width=1024, height=768, *, serve=None, headless=None, device=None,
           compute_device=None, title="cugl", interop="auto", pipelined=False,
           vsync=True, address=None, token=None)

    width, height: the framebuffer's size in pixels.
    serve: a TCP port to serve the frames on (0: any free one; None: not
        served), on 127.0.0.1 unless `address` is given (with `token`, the
        page's URL must carry it); the URL is printed and is `url`.
    headless: None: a window where a display is reachable, else headless;
        True: headless (EGL) always; False: a window or an error.
    device: the CUDA device GL runs on (headless: the EGL device of that
        ordinal), as an ordinal; None: device 0 where there is a CUDA device,
        else none; -1: none. Without one the viewer takes host memory alone
        (the host path; frame() is refused).
    compute_device: the CUDA device whose memory and streams feed the
        viewer, where it is not `device` (a second GPU): None is `device`.
    interop: "auto" (the fastest path that works between GL and the
        device; `interop` and `reason` say which and why), "map", "shared"
        or "host".
    pipelined: GL shows a frame one turn late and neither side waits for
        the other (shared and map paths).

    The viewer is a context manager; close() frees everything it holds,
    once (as collecting it does).
    """

    def __init__(self, width=1024, height=768, *, serve=None, headless=None, device=None,
                 compute_device=None, title="cugl", interop="auto", pipelined=False,
                 vsync=True, address=None, token=None):
        app = _app_lib.load()
        if interop not in _INTEROP:
            raise ValueError("interop %r is none of %s" % (interop, ", ".join(_INTEROP)))
        if headless not in (None, True, False):
            raise ValueError("headless must be None, True or False, not %r" % (headless,))
        res = self._res = _Resources()
        self._finalizer = weakref.finalize(self, _Resources.free, res)
        self._thread = threading.get_ident()
        self._title = str(title)
        self._pipelined = bool(pipelined)
        self._in_turn = False
        self._draw = None
        self._ui_open = False
        self._last_frame_time = None
        self._key_codes = {}
        self._token = None
        self._frame_access = None
        self.copies = 0  # copies into targets this viewer has made (show's one each)

        gl_ordinal, compute = self._choose_devices(device, compute_device)
        desc = AppContextDesc(mode={None: _AUTO, True: _HEADLESS, False: _WINDOW}[headless],
                              width=int(width), height=int(height),
                              title=self._title.encode(), no_vsync=not vsync,
                              cuda_device=gl_ordinal)
        out = c_void_p()
        try:
            app.cugl_app_context_create(byref(out), byref(desc))
        except _errors.NotSupportedError:
            # A CUDA device whose GL this machine cannot reach (no EGL device
            # for it): GL elsewhere, the device's output through host copies.
            if device is not None or gl_ordinal < 0:
                raise
            desc.cuda_device = -1
            app.cugl_app_context_create(byref(out), byref(desc))
        res.ctx = out.value
        _current.ctx = res.ctx
        res.gl = _gl.GL(app)
        self._device = None
        if compute >= 0:
            self._device = Device(compute)
            self._device.set_current()
            res.stream = self._device.create_stream()
            # The events that mark shows' copies, all made now: what the
            # viewer holds does not change with how far the GPU lags.
            res.free_events = [self._device.create_event() for _ in range(_MAX_PENDING + 1)]

        # The path: one probe, as libcugl-app chooses it for this context and
        # device; the viewer's targets then take it as asked.
        probe = self._new_target(_IMAGE, _RGBA8, 1, 1, 0, interop=_INTEROP[interop])
        self._interop = app.cugl_app_target_interop(probe)
        self._reason = app.cugl_app_target_reason(probe).decode()
        app.cugl_app_target_destroy(probe)
        if serve is not None and serve is not False:
            self.serve(0 if serve is True else int(serve), address=address, token=token)

    @staticmethod
    def _choose_devices(device, compute_device):
        if device is None:
            gl = 0 if _cuda_device_count() > 0 else -1
        else:
            gl = int(device)
            if gl >= 0:
                Device(gl)  # refused now if there is no such device
        compute = gl if compute_device is None else int(compute_device)
        if compute >= 0:
            Device(compute)
        return gl, compute

    # --- what it is ----------------------------------------------------------------

    @property
    def interop(self):
        """The interop path the viewer's pictures take: "map", "shared" or "host"."""
        return _app_lib.load().cugl_app_interop_name(self._interop).decode()

    @property
    def reason(self):
        """Why that path: libcugl-app's sentence (what it chose, what refused)."""
        return self._reason

    @property
    def device(self):
        """The CUDA device (cugl.Device) whose memory and streams feed the
        viewer; None where there is none (host memory only)."""
        return self._device

    @property
    def stream(self):
        """The viewer's stream (a cugl.Stream; None without a device): shows
        and frame() turns are queued on it."""
        return self._res.stream

    @property
    def headless(self):
        return _app_lib.load().cugl_app_context_is_headless(self._ctx())

    @property
    def platform(self):
        """"glfw", "egl-device", "egl-surfaceless" or "egl-default"."""
        return _app_lib.load().cugl_app_context_platform(self._ctx()).decode()

    @property
    def renderer(self):
        """GL_RENDERER of the context."""
        return _app_lib.load().cugl_app_context_renderer(self._ctx()).decode()

    @property
    def size(self):
        """The framebuffer's (width, height) now (it follows resizes)."""
        w, h = c_int(), c_int()
        _app_lib.load().cugl_app_context_size(self._ctx(), byref(w), byref(h))
        return w.value, h.value

    @property
    def frame_number(self):
        """Presents so far."""
        return _app_lib.load().cugl_app_context_frame(self._ctx())

    @property
    def should_close(self):
        """The user asked to close (the window's close button, Escape, a
        close event)."""
        return _app_lib.load().cugl_app_context_should_close(self._ctx())

    @property
    def is_closed(self):
        return self._res.freed

    # --- guards --------------------------------------------------------------------------

    def _ctx(self):
        if self._res.freed:
            raise _errors.ClosedError("Viewer: the viewer has been closed")
        return self._res.ctx

    def _enter(self, who, turn_ok=False):
        """Checks before a call that draws: open, on the viewer's thread, no
        frame() turn open; the context made current."""
        self._ctx()
        if threading.get_ident() != self._thread:
            raise _errors.InvalidStateError(
                "Viewer.%s: a viewer is used by the thread that made it (its GL context is "
                "current there)" % who)
        if self._in_turn and not turn_ok:
            raise _errors.InvalidStateError(
                "Viewer.%s: a frame() turn is open; leave its with block first" % who)
        self._res.make_current()

    # --- targets -------------------------------------------------------------------------

    def _new_target(self, kind, fmt, width, height, size, interop=None):
        desc = AppTargetDesc(kind=kind, interop=self._interop if interop is None else interop,
                             format=fmt, width=width, height=height, size=size,
                             device=self._device._ptr if self._device else None,
                             pipelined=self._pipelined and interop is None)
        out = c_void_p()
        _app_lib.load().cugl_app_target_create(byref(out), self._res.ctx, byref(desc))
        return out.value

    def _target(self, role, kind, fmt=_RGBA8, width=0, height=0, size=0):
        """The target of `role`, made anew where its kind, format or size changed."""
        key = (kind, fmt, width, height, size)
        t = self._res.targets.get(role)
        if t is not None and t.key == key:
            return t.ptr
        self._res.drop_target(role)
        ptr = self._new_target(kind, fmt, width, height, size)
        self._res.targets[role] = _Target(ptr, key)
        return ptr

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

    def show(self, x, *, vmin=None, vmax=None, cmap="cugl", points=None, point_size=2.0,
             color=(1.0, 1.0, 1.0, 1.0), matrix=None):
        """Draw `x` and present.

        x: any object with __dlpack__ or __cuda_array_interface__, or a
        NumPy array (anything cugl.from_dlpack takes), in host or device
        memory:

          an image, (H, W, C) with C 1, 3 or 4 (or (H, W): one channel) of
          uint8, float16 or float32 (host memory: float64 too, as float32),
          row 0 at the bottom as GL and cugl's C API draw images, floats
          clamped to 0 .. 1, drawn over the whole framebuffer (nearest).
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
        self._enter("show")
        src = import_tensor(x, self._res.stream if self._res.stream is not None else -1)
        try:
            shape = src.shape
            if points is None:
                points = (len(shape) == 2 and shape[1] in (3, 4) and
                          src.name in ("float32", "float64"))
            if points:
                draw = self._points(src, point_size, color, matrix)
            else:
                draw = self._image(src, vmin, vmax, cmap)
        except BaseException:
            src.close()
            raise
        self._draw = draw
        self._finish(draw)

    def _image(self, src, vmin, vmax, cmap):
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
            return _image_drawer(res)
        if src.device_id >= 0:
            if name not in _PROGRAM_TYPE:
                raise TypeError("Viewer.show: device memory of %s; images are uint8, float16 "
                                "or float32" % name)
            return self._program_image(src, height, width, channels, name, vmin, vmax, cmap)
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
        return _image_drawer(res)

    def _program_image(self, src, height, width, channels, name, vmin, vmax, cmap):
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
                                           scale), words)

    def _show_through_program(self, a, vmin=None, vmax=None, cmap="cugl"):
        """show() of a host array of 1 or 3 channels the way device memory
        goes (a buffer target and the viewer's GL program): how the tests
        check that program where there is no CUDA device. The bytes are
        padded to a multiple of 4 (a buffer target without a device takes
        exactly its size)."""
        import numpy as np
        self._enter("show")
        a = np.ascontiguousarray(a)
        height, width = a.shape[:2]
        channels = a.shape[2] if a.ndim == 3 else 1
        flat = a.reshape(-1).view(np.uint8)
        padded = np.zeros((flat.size + 3) // 4 * 4, np.uint8)
        padded[:flat.size] = flat
        draw = self._program_image(import_tensor(padded), height, width, channels,
                                   a.dtype.name, vmin, vmax, cmap)
        self._draw = draw
        self._finish(draw)

    # --- points ----------------------------------------------------------------------------

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

    # --- frame() ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def frame(self, *, stream=None):
        """CUDA's turn on the picture's own GL-visible memory, handed over as
        a DLPack tensor to write in place (zero copies on the map and shared
        paths); leaving the with block ends the turn, draws and presents.

            with viewer.frame() as img:
                torch.from_dlpack(img)[..., :3] = rgb   # (H, W, 4) uint8, RGBA

        The tensor is (height, width, 4) uint8 of the framebuffer's size,
        row 0 at the bottom, valid inside the block only:
          shared and host paths: the RGBA8 image target's linear memory, rows
            its pitch apart (strides (pitch, 4, 1));
          map path: an image is reached there through a CUDA surface, not a
            pointer, so frame() takes a buffer target instead (linear memory,
            registered with CUDA and mapped for the turn; strides (4 * width,
            4, 1)) and draws it with cugl_app_blit_rgba8_buffer.
        The turn runs on `stream` (a Stream, an object with __cuda_stream__,
        PyTorch's, or DLPack's 1 and 2), where it is of the viewer's device,
        else on the device's legacy default stream: the one PyTorch and CuPy
        use unless told otherwise, and DLPack's default. A consumer on that
        stream needs no ordering; one on another stream (DLPack's `stream`)
        is ordered both ways: its work waits for the turn's beginning (the
        DLPack handshake), and the turn's end for its work. (On the map path
        a turn on one stream written from another cost 2.1 ms a frame more,
        1920x1080 on an H100, either way round: write on the turn's stream,
        or pass the writer's as `stream`.) An exception inside the block ends
        the turn without drawing; the viewer stays usable.

        Without a CUDA device (the host path where GL runs on no GPU, as on
        Mesa) there is no device memory to hand out: frame() raises
        cugl.NotSupportedError; show() a host array instead.
        """
        self._enter("frame")
        if self._device is None:
            raise _errors.NotSupportedError(
                "Viewer.frame: the viewer has no CUDA device (%s); frame() hands out device "
                "memory that GL shows. show() a host array (NumPy) instead" % self._reason)
        app = _app_lib.load()
        res = self._res
        width, height = self.size
        mapped = self._interop == _INTEROP["map"]
        if mapped:
            t = self._target("frame", _BUFFER, size=width * height * 4)
        else:
            t = self._target("frame", _IMAGE, _RGBA8, width, height)
        turn = self._turn_stream(stream)
        consumers = [] if stream is None else [(stream, self._device.device_id)]
        target = res.targets["frame"]
        # The view of the memory the last turn had, made before this turn
        # begins: the GPU waits for nothing Python does there (the memory
        # seldom moves; where it did, the view is made again).
        key = (t, width, height, mapped)
        last = self._frame_access
        early = (self._frame_view(target, *last[1], width, height, mapped, consumers, turn)
                 if last is not None and last[0] == key else None)
        access = AppAccess()
        try:
            app.cugl_app_target_cuda_begin(t, turn._ptr, byref(access))
        except BaseException:
            if early is not None:
                early.close()
            raise
        self._in_turn = True
        try:
            self._frame_access = (key, (access.ptr, access.pitch, access.size))
            if early is not None and self._frame_access == last:
                view = early
            else:
                if early is not None:
                    early.close()
                view = self._frame_view(target, *self._frame_access[1], width, height, mapped,
                                        consumers, turn)
            try:
                yield view
            finally:
                view.close()
                self._wait_for(consumers, turn)
        except BaseException:
            self._in_turn = False
            try:
                app.cugl_app_target_cuda_end(t, turn._ptr)
            except _errors.CuglError:
                pass  # the exception that ended the turn is the one to see
            raise
        self._in_turn = False
        app.cugl_app_target_cuda_end(t, turn._ptr)
        draw = _frame_drawer(res, mapped, width, height)
        self._draw = draw
        self._finish(draw)

    def _turn_stream(self, stream):
        """frame()'s stream: `stream` where it is one of the viewer's
        device, else the device's legacy default stream."""
        from ._interop import default_stream
        from ._stream import as_stream
        res = self._res
        if isinstance(stream, int) and not isinstance(stream, bool):
            handle = stream if stream in (1, 2) else 1
            return default_stream(self._device, handle, res.consumer_streams)
        if stream is not None:
            s = as_stream(stream, "stream")
            if s.device is self._device:
                return s
        return default_stream(self._device, 1, res.consumer_streams)

    def _frame_view(self, target, ptr, pitch, size, width, height, mapped, consumers, turn):
        from ._memory import Buffer
        lib = load()
        if mapped:
            pitch = width * 4
        size = size or pitch * height
        buf = target.buffers.get((ptr, size))
        if buf is None:
            if len(target.buffers) >= _MAX_FRAME_BUFFERS:
                # The memory moved (a map may place it anew): start again.
                for b in target.buffers.values():
                    b.close()
                target.buffers.clear()
            buf = target.buffers[(ptr, size)] = Buffer.from_handle(ptr, size)
        layout = Layout()
        shape = (c_int64 * 3)(height, width, 4)
        strides = (c_int64 * 3)(pitch, 4, 1)
        lib.cugl_layout_init(byref(layout), 3, shape, strides, 1)
        out = c_void_p()
        lib.cugl_view_from_buffer(byref(out), buf._ptr, byref(layout), DType(dl.UINT, 8, 1),
                                  False)
        view = _FrameView._wrap(out.value, None, turn)
        view._consumers, view._consumer_streams = consumers, self._res.consumer_streams
        return view

    def _wait_for(self, consumers, turn):
        """The turn's stream waits for the work the consumers queued:
        (stream, device) pairs, the stream a Stream, an object with
        __cuda_stream__ or a DLPack stream int (None or 1: the legacy
        default stream, 2: the per-thread one, of that device; -1: none)."""
        from ._interop import default_stream
        from ._stream import as_stream
        res = self._res
        waited = False
        for s, device_id in consumers:
            if s is None:
                s = 1  # DLPack: no stream given is the legacy default stream
            if isinstance(s, int) and not isinstance(s, bool):
                if s == -1:
                    continue  # the consumer orders its work itself
                other = res.consumer_streams.get((device_id, s))
                if other is None:
                    other = default_stream(Device(device_id), s, res.consumer_streams)
                    waited = True  # made that device current
            else:
                other = as_stream(s)
            if other is turn:
                continue  # the turn's own stream (a kept wrapper): nothing to order
            waited = True
            if other.handle != turn.handle or other.device is not turn.device:
                turn.wait(other)
        if waited:
            self._device.set_current()

    # --- presenting ---------------------------------------------------------------------

    def present(self):
        """Draw the last picture again (with the panel's widgets of this
        frame) and present: for frames where only the input or the panel
        changed."""
        self._enter("present")
        self._finish(self._draw or (lambda: None))

    def _finish(self, draw):
        """Clear, draw the picture, the panel and the served frame, present."""
        app = _app_lib.load()
        res, gl = self._res, self._res.gl
        width, height = self.size
        gl.glBindFramebuffer(_gl.GL_FRAMEBUFFER, app.cugl_app_context_framebuffer(res.ctx))
        gl.glViewport(0, 0, width, height)
        covers = getattr(draw, "covers", False)
        if not covers:
            self._clear()
        failure = None
        try:
            draw()
        except _errors.CuglError as e:
            failure = e
            if covers:
                self._clear()  # what was drawn, if anything, is not the picture
        if self._ui_open:
            self._ui_open = False
            try:
                app.cugl_app_ui_end(res.ui)
            except _errors.CuglError as e:
                failure = failure or e
        if res.server is not None:
            app.cugl_app_server_frame(res.server)
        app.cugl_app_context_present(res.ctx)
        self._last_frame_time = time.perf_counter()
        if failure is not None:
            raise failure

    def _clear(self):
        # A picture over the whole viewport (images, frame()'s memory) writes
        # every pixel and is drawn without this: on an H100 the clear of a
        # 1920x1080 frame added 0.15 ms to a frame() in lockstep.
        gl = self._res.gl
        gl.glClearColor(0.0, 0.0, 0.0, 1.0)
        gl.glClear(_gl.GL_COLOR_BUFFER_BIT)

    # --- input ----------------------------------------------------------------------------

    def events(self):
        """This frame's input events, in the order they came (InputEvent objects):
        the window's, the browser's and pushed ones alike."""
        count, lost = c_size_t(), c_size_t()
        p = _app_lib.load().cugl_app_context_events(self._ctx(), byref(count), byref(lost))
        return [InputEvent._from_c(p[i]) for i in range(count.value)]

    @property
    def input(self):
        """This frame's input state (an Input)."""
        c = _app_lib.load().cugl_app_context_input(self._ctx()).contents
        return Input(c.x, c.y, c.dx, c.dy, c.scroll, c.left, c.right, c.middle, c.shift,
                     c.ctrl)

    def _key_code(self, key):
        code = self._key_codes.get(key)
        if code is None:
            if isinstance(key, int) and not isinstance(key, bool):
                code = key
            else:
                code = InputEvent.parse("0 key %s down" % (key,)).code
            self._key_codes[key] = code
        return code

    def key_down(self, key):
        """Whether `key` is held this frame: a key code (GLFW's), a character
        ("a", "7", ",") or a word of the input format ("escape", "space",
        "left", "f1", "left_shift", ...)."""
        return _app_lib.load().cugl_app_key_down(self._ctx(), self._key_code(key))

    def key_presses(self, key):
        """How many times `key` (as for key_down) went down in this frame's
        events: for a key that toggles or steps something. A press and
        release within one frame counts, which key_down never shows; a key
        held over many frames counts once."""
        return _app_lib.load().cugl_app_key_presses(self._ctx(), self._key_code(key))

    def push_event(self, event):
        """Queue an input event (an InputEvent, or a line of the input format with
        or without its frame) for the next present, as if the window had
        reported it (cugl_app_context_push_event)."""
        e = event if isinstance(event, InputEvent) else InputEvent.parse(event)
        c = e._c()
        _app_lib.load().cugl_app_context_push_event(self._ctx(), byref(c))

    # --- the panel ---------------------------------------------------------------------------

    @property
    def has_panel(self):
        """Whether this libcugl-app has the panel (Dear ImGui)."""
        return _app_lib.has("ui")

    def _panel(self, who):
        self._enter(who)
        if not _app_lib.has("ui"):
            raise _errors.NotSupportedError(
                "Viewer.%s: this libcugl-app was built without the panel (Meson feature `ui`: "
                "Debian's libimgui-dev and a C++ compiler)" % who)
        app = _app_lib.load()
        res = self._res
        if res.ui is None:
            out = c_void_p()
            app.cugl_app_ui_create(byref(out), res.ctx)
            res.ui = out.value
        if not self._ui_open:
            now = time.perf_counter()
            dt = now - self._last_frame_time if self._last_frame_time else 0.0
            app.cugl_app_ui_begin(res.ui, dt, self._title.encode())
            self._ui_open = True
        return res.ui

    def slider(self, label, value, lo, hi):
        """A slider in the panel from lo to hi; returns its value (float,
        or int where value, lo and hi are all ints)."""
        ui = self._panel("slider")
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (value, lo, hi)):
            v = c_int(value)
            _app_lib.load().cugl_app_ui_slider_int(ui, str(label).encode(), byref(v), lo, hi)
        else:
            v = c_float(value)
            _app_lib.load().cugl_app_ui_slider_float(ui, str(label).encode(), byref(v),
                                                     float(lo), float(hi))
        return v.value

    def checkbox(self, label, value):
        """A checkbox in the panel; returns its state (a click flips it)."""
        ui = self._panel("checkbox")
        v = c_bool(value)
        _app_lib.load().cugl_app_ui_checkbox(ui, str(label).encode(), byref(v))
        return v.value

    def combo(self, label, index, items):
        """A drop-down list of `items` (strings); returns the chosen index."""
        ui = self._panel("combo")
        encoded = [str(i).encode() for i in items]
        arr = (c_char_p * max(len(encoded), 1))(*encoded)
        v = c_int(index)
        _app_lib.load().cugl_app_ui_combo(ui, str(label).encode(), byref(v), arr, len(encoded))
        return v.value

    def text(self, text):
        """A line of text in the panel."""
        ui = self._panel("text")
        _app_lib.load().cugl_app_ui_text(ui, b"%s", str(text).encode())

    @property
    def panel_wants_mouse(self):
        """The panel takes the mouse this frame (the cursor is over it, or a
        drag began on it): leave the mouse's events to it."""
        res = self._res
        if res.ui is None or not self._ui_open:
            return False
        return _app_lib.load().cugl_app_ui_wants_mouse(res.ui)

    # --- serving --------------------------------------------------------------------------------

    def serve(self, port=0, *, address=None, token=None, quality=0):
        """Serve the frames to web browsers (cugl/app_serve.h) from the next
        present on, on 127.0.0.1 (or `address`) at `port` (0: any free
        one); their mouse and keys come back as events. Prints and returns
        the page's URL (already serving: returns it)."""
        self._enter("serve", turn_ok=True)
        res = self._res
        if res.server is not None:
            return self.url
        if not _app_lib.has("serve"):
            raise _errors.NotSupportedError(
                "Viewer.serve: this libcugl-app was built without the frame server (Meson "
                "feature `serve`: Debian's libwebsockets-dev and libturbojpeg0-dev)")
        desc = AppServerDesc(address=address.encode() if address else None, port=int(port),
                             token=token.encode() if token else None,
                             name=self._title.encode(), quality=int(quality))
        out = c_void_p()
        _app_lib.load().cugl_app_server_create(byref(out), res.ctx, byref(desc))
        res.server = out.value
        self._token = token
        url = self.url
        print("cugl: serving %s at %s" % (self._title, url), flush=True)
        return url

    @property
    def url(self):
        """The page's URL while serving, else None."""
        res = self._res
        if res.freed or res.server is None:
            return None
        app = _app_lib.load()
        host = app.cugl_app_server_address(res.server, 0).decode()
        if host in ("0.0.0.0", "::"):
            import socket
            host = socket.gethostname()
        elif ":" in host:
            host = "[%s]" % host
        url = "http://%s:%d/" % (host, app.cugl_app_server_port(res.server))
        return url + ("?token=%s" % self._token if self._token else "")

    def set_stats(self, text):
        """The text the served page shows under the picture."""
        res = self._res
        if res.server is not None:
            _app_lib.load().cugl_app_server_set_stats(res.server, str(text).encode())

    # --- reading back ---------------------------------------------------------------------------

    def read_pixels(self):
        """The framebuffer as (height, width, 4) uint8 RGBA, rows top to
        bottom (a NumPy array; bytes without NumPy). Headless, it holds the
        last frame presented; a window's back buffer after a present is the
        platform's affair."""
        self._enter("read_pixels")
        width, height = self.size
        size = width * height * 4
        buf = create_string_buffer(size)
        _app_lib.load().cugl_app_read_pixels(buf, size, self._res.ctx)
        try:
            import numpy as np
        except ImportError:
            return buf.raw
        return np.frombuffer(buf.raw, np.uint8).reshape(height, width, 4).copy()

    def screenshot(self, path):
        """The framebuffer as a PNG file."""
        self._enter("screenshot")
        _app_lib.load().cugl_app_screenshot(self._res.ctx, str(path).encode())

    # --- lifetime --------------------------------------------------------------------------------

    def close(self):
        """Free everything the viewer holds (targets, panel, server, stream,
        the context), once; later calls do nothing, other methods raise
        cugl.ClosedError."""
        if threading.get_ident() != self._thread and not self._res.freed:
            raise _errors.InvalidStateError(
                "Viewer.close: a viewer is closed by the thread that made it")
        if self._in_turn:
            raise _errors.InvalidStateError("Viewer.close: a frame() turn is open")
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self._res.freed:
            return "<Viewer closed>"
        w, h = self.size
        return "<Viewer %dx%d %s %s%s>" % (w, h, "headless" if self.headless else "window",
                                           self.interop, " " + self.url if self.url else "")


# --- drawing: functions of the resources alone (a closure over the viewer
# would hold it in a cycle through its last picture) ------------------------------


def _nothing():
    pass


def _covering(draw):
    """`draw`, marked as writing every pixel of the viewport (a triangle over
    it, no blending, no discard): _finish then skips the clear."""
    draw.covers = True
    return draw


def _image_drawer(res):
    def draw():
        _app_lib.load().cugl_app_target_draw(res.targets["image"].ptr)
    return _covering(draw)


def _points_drawer(res, count, components, matrix, size, rgba):
    def draw():
        _app_lib.load().cugl_app_target_draw_points(res.targets["points"].ptr, count,
                                                    components, matrix, size, rgba)
    return draw


def _frame_drawer(res, mapped, width, height):
    app = _app_lib.load()
    if not mapped:
        def draw():
            app.cugl_app_target_draw(res.targets["frame"].ptr)
        return _covering(draw)

    def draw_buffer():
        # The map path's frame is a buffer: blitted from GL's buffer itself.
        t = res.targets["frame"].ptr
        app.cugl_app_target_gl_begin(t)
        try:
            app.cugl_app_blit_rgba8_buffer(res.ctx, app.cugl_app_target_gl_name(t), width,
                                           height, width * 4)
        finally:
            app.cugl_app_target_gl_end(t)
    return _covering(draw_buffer)


def _program(res):
    """The viewer's GL program (cugl/_gl.py), made at its first use."""
    if not res.program:
        out = c_uint32()
        _app_lib.load().cugl_app_program(byref(out), b"cugl-viewer", _gl.VERTEX, _gl.FRAGMENT)
        res.program = out.value
        res.vao = res.gl.vertex_array()
        res.uniforms = {name: res.gl.glGetUniformLocation(res.program, name.encode())
                        for name in _gl.UNIFORMS}
    return res.program


def _program_drawer(res, uniforms, words):
    width, height, channels, dtype, lo, scale = uniforms

    def draw():
        app, gl = _app_lib.load(), res.gl
        program = _program(res)
        if words is not None and words != res.lut_words:
            if not res.lut:
                res.lut = gl.buffer(words, len(words))
            else:
                gl.glNamedBufferSubData(res.lut, 0, len(words), words)
            res.lut_words = words
        t = res.targets["program"].ptr
        vw, vh = c_int(), c_int()
        app.cugl_app_context_size(res.ctx, byref(vw), byref(vh))
        app.cugl_app_drain_gl_errors()
        app.cugl_app_target_gl_begin(t)
        try:
            u = res.uniforms
            gl.glUseProgram(program)
            gl.glUniform4i(u["u_viewport"], 0, 0, vw.value, vh.value)
            gl.glUniform2i(u["u_size"], width, height)
            gl.glUniform1i(u["u_channels"], channels)
            gl.glUniform1i(u["u_type"], dtype)
            gl.glUniform1f(u["u_lo"], lo)
            gl.glUniform1f(u["u_scale"], scale)
            gl.glBindBufferBase(_gl.GL_SHADER_STORAGE_BUFFER, 0, app.cugl_app_target_gl_name(t))
            if res.lut:
                gl.glBindBufferBase(_gl.GL_SHADER_STORAGE_BUFFER, 1, res.lut)
            gl.glBindVertexArray(res.vao)
            gl.glDrawArrays(_gl.GL_TRIANGLES, 0, 3)
            gl.glBindVertexArray(0)
            gl.glUseProgram(0)
            app.cugl_app_check_gl(b"Viewer.show", b"drawing through the viewer's program")
        finally:
            app.cugl_app_target_gl_end(t)
    return _covering(draw)


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


def app_library_path():
    """The path of the libcugl-app the viewer uses (loading it if needed)."""
    return _app_lib.library_path()
