"""The viewer's context and what it holds: the values of libcugl-app's
enums the viewer passes, the context this package made current on each
thread, and _Resources, everything a viewer holds, freed once (close(),
collection or exit) with its context current."""
import collections
import threading

from .. import _app_lib
from .. import _errors
from .. import _gl
from .._device import device_count
from .recording import _warn_unfinished

# cugl_app_mode, cugl_app_target_kind, cugl_app_format (the headers' values)
_AUTO, _WINDOW, _HEADLESS = 0, 1, 2
_IMAGE, _BUFFER, _VOLUME = 0, 1, 2
_RGBA8, _RGBA16F, _RGBA32F, _R32F = 0, 1, 2, 3
_FORMAT_OF = {"uint8": _RGBA8, "float16": _RGBA16F, "float32": _RGBA32F}
_PROGRAM_TYPE = {"uint8": _gl.TYPE_UINT8, "float16": _gl.TYPE_FLOAT16,
                 "float32": _gl.TYPE_FLOAT32}
# cugl_app_interop: CUGL_APP_INTEROP_LIST's names (cugl_app_interop_name says them too)
_INTEROP = {"auto": 0, "map": 1, "shared": 2, "host": 3}

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
        self.recording = None  # the Recording under way (recording.py)
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
        if self.recording is not None:
            # Finished first, while the context its GL buffers belong to is
            # there; close() has done it already where it was called, and
            # raised its failure: here no one is left to raise it to.
            rec, self.recording = self.recording, None
            try:
                rec._close()
            except _errors.CuglError as e:
                _warn_unfinished(rec, e)
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
