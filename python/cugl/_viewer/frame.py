"""frame(): CUDA's turn on the picture's own GL-visible memory, handed
out as a view to write in place, with the ordering between the turn's
stream and its consumers' streams."""
import contextlib
from ctypes import byref, c_int64, c_void_p

from .. import _app_lib
from .. import _dlpack as dl
from .. import _dtypes
from .. import _errors
from .._app_structs import AppAccess
from .._device import Device
from .._lib import load
from .._structs import DType, Layout
from .._view import StridedMemoryView
from .context import _BUFFER, _IMAGE, _INTEROP, _RGBA8
from .drawing import _frame_drawer


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


class _Frames:
    """Viewer's frame()."""

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
        self._enter("frame", draws=True)
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
        from .._interop import default_stream
        from .._stream import as_stream
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
        from .._memory import Buffer
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
        from .._interop import default_stream
        from .._stream import as_stream
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
