"""The Viewer itself: its context, devices and targets, presenting, reading
back and its lifetime. Each other subject is a module of this package whose
class the Viewer derives from (images, points, mesh, frame, input, panel,
serving, recording). Every call is a call into libcugl-app through
ctypes.CDLL, which releases the GIL for its duration; a viewer is used by
the thread that made it (its GL context is current there).
"""
import threading
import time
import weakref
from ctypes import byref, c_int, c_void_p, create_string_buffer

from .. import _app_lib
from .. import _errors
from .. import _gl
from .._app_structs import AppContextDesc, AppTargetDesc
from .._device import Device
from .context import (_AUTO, _HEADLESS, _IMAGE, _INTEROP, _MAX_PENDING, _RGBA8, _WINDOW,
                      _cuda_device_count, _current, _Resources, _Target)
from .frame import _Frames
from .images import _Images
from . import interrupt
from .input import _Inputs
from .mesh import _Mesh
from .notebook import _Notebook
from .panel import _Panel
from .points import _Points
from .recording import _Recording
from .serving import _Serving


class Viewer(_Images, _Points, _Mesh, _Frames, _Inputs, _Panel, _Serving, _Recording,
             _Notebook):
    """A window (where a display is), or a headless GL context, that shows
    images and point sets, optionally served to web browsers and recorded
    as a video file.

    Viewer(width=1024, height=768, *, serve=None, headless=None, device=None,
           compute_device=None, title="cugl", interop="auto", pipelined=False,
           vsync=True, address=None, token=None, debug=False)

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
    debug: a debug GL context, whose debug output (errors, warnings) comes
        as notices.

    record(path, *, fps=60, kbps=0, size=None, clock="fixed",
    keep_every_frame=False) records every frame presented from then on
    into a video file (".mp4": H.264, ".webm": VP8), where libcugl-app has
    the recorder; stop_recording(), the Recording's stop() or the end of
    its `with` block, and close() finish the file.

    libcugl-app's notices (GL's debug output, the frame server falling
    back to another encoder, a frame it could not encode) are Python
    warnings of category cugl.AppNotice, issued on whichever thread has
    them (the frame server's encoders have threads of their own): filter
    them as any warning; under the default filter each text shows once (an
    "error" filter cannot raise through C: sys.unraisablehook gets it).
    cugl/_notices.py says why warnings rather than logging.

    The viewer is a context manager; close() frees everything it holds,
    once (as collecting it does), and finishes a recording's file first.
    """

    def __init__(self, width=1024, height=768, *, serve=None, headless=None, device=None,
                 compute_device=None, title="cugl", interop="auto", pipelined=False,
                 vsync=True, address=None, token=None, debug=False):
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
        # Ctrl-C (interrupt.py): "asked", "drawn" (a frame since), "seen" by should_close
        self._interrupt = None
        self._still_frame = None  # the frame a notebook cell's still picture is of
        self._key_codes = {}
        self._token = None
        self._frame_access = None
        self.copies = 0  # copies into targets this viewer has made (show's one each)

        gl_ordinal, compute = self._choose_devices(device, compute_device)
        desc = AppContextDesc(mode={None: _AUTO, True: _HEADLESS, False: _WINDOW}[headless],
                              width=int(width), height=int(height),
                              title=self._title.encode(), no_vsync=not vsync,
                              debug=bool(debug),
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
        close event), or pressed Ctrl-C while the viewer was presenting
        (true until the next present: cugl/_viewer/interrupt.py)."""
        ctx = self._ctx()
        if self._interrupt is not None:
            self._interrupt = "seen"
            return True
        return _app_lib.load().cugl_app_context_should_close(ctx)

    @property
    def is_closed(self):
        return self._res.freed

    # --- guards --------------------------------------------------------------------------

    def _ctx(self):
        if self._res.freed:
            raise _errors.ClosedError("Viewer: the viewer has been closed")
        return self._res.ctx

    def _enter(self, who, turn_ok=False, draws=False):
        """Checks before a call on the context: open, on the viewer's
        thread, no frame() turn open; the context made current. A call that
        `draws` (show, present, frame) also takes a Ctrl-C its loop did not
        ask about (interrupt.py) and puts the Ctrl-C handler in place."""
        self._ctx()
        if threading.get_ident() != self._thread:
            raise _errors.InvalidStateError(
                "Viewer.%s: a viewer is used by the thread that made it (its GL context is "
                "current there)" % who)
        if self._in_turn and not turn_ok:
            raise _errors.InvalidStateError(
                "Viewer.%s: a frame() turn is open; leave its with block first" % who)
        if draws:
            # A Ctrl-C: the frame being made is drawn ("asked": the loop had
            # no chance to ask yet); the one after it is refused where
            # should_close was not asked in between ("drawn").
            state = self._interrupt
            if state == "drawn":
                self._interrupt = None
                raise KeyboardInterrupt("Viewer.%s: Ctrl-C, and the loop did not ask "
                                        "should_close" % who)
            self._interrupt = "drawn" if state == "asked" else None
            interrupt.arm(self)
        self._res.make_current()

    # --- targets -------------------------------------------------------------------------

    def _new_target(self, kind, fmt, width, height, size, interop=None, depth=0):
        desc = AppTargetDesc(kind=kind, interop=self._interop if interop is None else interop,
                             format=fmt, width=width, height=height, depth=depth, size=size,
                             device=self._device._ptr if self._device else None,
                             pipelined=self._pipelined and interop is None)
        out = c_void_p()
        _app_lib.load().cugl_app_target_create(byref(out), self._res.ctx, byref(desc))
        return out.value

    def _target(self, role, kind, fmt=_RGBA8, width=0, height=0, size=0, depth=0):
        """The target of `role`, made anew where its kind, format or size changed."""
        key = (kind, fmt, width, height, size, depth)
        t = self._res.targets.get(role)
        if t is not None and t.key == key:
            return t.ptr
        self._res.drop_target(role)
        ptr = self._new_target(kind, fmt, width, height, size, depth=depth)
        self._res.targets[role] = _Target(ptr, key)
        return ptr

    # --- presenting ---------------------------------------------------------------------

    def present(self):
        """Draw the last picture again (with the panel's widgets of this
        frame) and present: for frames where only the input or the panel
        changed."""
        self._enter("present", draws=True)
        self._finish(self._draw or (lambda: None))

    def _finish(self, draw):
        """Clear, draw the picture and the panel; the served and the recorded
        frame; present."""
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
        if res.recording is not None:
            lost = self._record_frame()  # the recording's end: the failure to see
            if lost is not None:
                lost.__context__, failure = failure, lost
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
        gl.glClear(_gl.GL_COLOR_BUFFER_BIT | _gl.GL_DEPTH_BUFFER_BIT)  # depth: mesh()'s

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
        """Free everything the viewer holds (recorder, targets, panel,
        server, stream, the context), once; later calls do nothing, other
        methods raise cugl.ClosedError. A recording's file is finished
        first: its failure is raised once everything is freed."""
        self._close(in_flight=False)

    def _close(self, in_flight):
        if threading.get_ident() != self._thread and not self._res.freed:
            raise _errors.InvalidStateError(
                "Viewer.close: a viewer is closed by the thread that made it")
        if self._in_turn:
            raise _errors.InvalidStateError("Viewer.close: a frame() turn is open")
        if not self._res.freed:
            self._notebook_close()
        failure = self._end_recording(in_flight)
        interrupt.forget(self)
        self._finalizer()
        if failure is not None:
            raise failure

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self._close(in_flight=exc_type is not None)

    def __repr__(self):
        if self._res.freed:
            return "<Viewer closed>"
        w, h = self.size
        return "<Viewer %dx%d %s %s%s>" % (w, h, "headless" if self.headless else "window",
                                           self.interop, " " + self.url if self.url else "")


def app_library_path():
    """The path of the libcugl-app the viewer uses (loading it if needed)."""
    return _app_lib.library_path()
