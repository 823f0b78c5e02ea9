"""Streams and events: cuda.core's Stream and Event over stream.h and event.h."""
import dataclasses
from ctypes import byref, c_bool, c_float, c_void_p

from ._device import Device
from ._handle import Owned
from ._lib import load
from ._structs import EventDesc, StreamDesc


@dataclasses.dataclass(frozen=True)
class StreamOptions:
    """Options of Device.create_stream (cuda.core's names).

    nonblocking: no implicit ordering with the legacy default stream.
    priority: None or 0 for the default; lower numbers are higher priority.
    """
    nonblocking: bool = True
    priority: int = None


@dataclasses.dataclass(frozen=True)
class EventOptions:
    """Options of Device.create_event and Stream.record (cuda.core's names)."""
    timing_enabled: bool = False
    blocking_sync: bool = False
    ipc_enabled: bool = False


def _release_stream(ptr):
    load().cugl_stream_release(ptr)


def _release_event(ptr):
    load().cugl_event_release(ptr)


class Stream(Owned):
    """A stream of work on a device.

    Made by Device.create_stream(), Device.default_stream or
    Stream.from_handle(); close() destroys a stream cugl created (a wrapped
    one is only forgotten). Streams speak the __cuda_stream__ protocol.
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Stream objects cannot be instantiated directly; use "
                           "Device.create_stream(), Device.default_stream or "
                           "Stream.from_handle()")

    @classmethod
    def _wrap(cls, ptr, owned=True):
        s = cls.__new__(cls)
        s._own(ptr, _release_stream if owned else None)
        return s

    @classmethod
    def _create(cls, device, options):
        opts = options if options is not None else StreamOptions()
        if not isinstance(opts, StreamOptions):
            raise TypeError("options must be a StreamOptions, not %s" % type(opts).__name__)
        desc = StreamDesc(blocking=not opts.nonblocking, priority=opts.priority or 0)
        out = c_void_p()
        load().cugl_stream_create(byref(out), Device(device)._ptr, byref(desc))
        return cls._wrap(out.value)

    @classmethod
    def from_handle(cls, handle):
        """Wrap a CUstream made elsewhere: an int (1 and 2 name the legacy and
        per-thread default streams of the current device), an object with
        __cuda_stream__, or one with an int `cuda_stream` (PyTorch's). The
        stream's device must have had set_current()."""
        if hasattr(handle, "__cuda_stream__"):
            version_and_handle = handle.__cuda_stream__()
            handle = version_and_handle[1]
        elif isinstance(getattr(handle, "cuda_stream", None), int):
            handle = handle.cuda_stream
        if isinstance(handle, bool) or not isinstance(handle, int):
            raise TypeError("a stream handle must be an int or have __cuda_stream__, not %s"
                            % type(handle).__name__)
        out = c_void_p()
        load().cugl_stream_from_handle(byref(out), handle)
        return cls._wrap(out.value)

    @property
    def handle(self):
        """The raw CUstream as an int (1 for the legacy default stream); 0
        after close."""
        return load().cugl_stream_handle(self._ptr) or 0

    def __cuda_stream__(self):
        return (0, self.handle)

    @property
    def device(self):
        return Device._from_ptr(load().cugl_stream_device(self._ptr))

    @property
    def is_nonblocking(self):
        return load().cugl_stream_is_nonblocking(self._ptr)

    @property
    def priority(self):
        return load().cugl_stream_priority(self._ptr)

    @property
    def is_closed(self):
        return load().cugl_stream_is_closed(self._ptr)

    @property
    def is_done(self):
        """Whether all work queued on the stream has completed."""
        done = c_bool()
        load().cugl_stream_query(self._ptr, byref(done))
        return done.value

    def sync(self):
        """Block until all work queued on the stream has completed."""
        load().cugl_stream_sync(self._ptr)

    def wait(self, event_or_stream):
        """Make later work on this stream wait for an Event, or for the work
        queued so far on another stream (or object with __cuda_stream__)."""
        if isinstance(event_or_stream, Event):
            load().cugl_stream_wait_event(self._ptr, event_or_stream._ptr)
            return
        other = as_stream(event_or_stream, "event_or_stream")
        load().cugl_stream_wait_stream(self._ptr, other._ptr)

    def record(self, event=None, options=None):
        """Record `event` (a new one made with `options` when None) on this
        stream; returns it."""
        if event is None:
            event = Event._create(self.device, options)
        elif not isinstance(event, Event):
            raise TypeError("event must be an Event, not %s" % type(event).__name__)
        load().cugl_stream_record(self._ptr, event._ptr)
        return event

    def close(self):
        """Destroy the stream now (queued work still completes); idempotent."""
        load().cugl_stream_close(self._ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<Stream handle=0x%x%s>" % (self.handle, " closed" if self.is_closed else "")


class Event(Owned):
    """A marker in a stream: made by Device.create_event() or Stream.record().
    `end - start` is the time between two timing events, in milliseconds."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Event objects cannot be instantiated directly; use "
                           "Device.create_event() or Stream.record()")

    @classmethod
    def _create(cls, device, options):
        opts = options if options is not None else EventOptions()
        if not isinstance(opts, EventOptions):
            raise TypeError("options must be an EventOptions, not %s" % type(opts).__name__)
        desc = EventDesc(timing=opts.timing_enabled, blocking_sync=opts.blocking_sync,
                         ipc=opts.ipc_enabled)
        out = c_void_p()
        load().cugl_event_create(byref(out), Device(device)._ptr, byref(desc))
        e = cls.__new__(cls)
        e._own(out.value, _release_event)
        return e

    @property
    def handle(self):
        """The raw CUevent as an int; 0 after close."""
        return load().cugl_event_handle(self._ptr) or 0

    @property
    def device(self):
        return Device._from_ptr(load().cugl_event_device(self._ptr))

    @property
    def is_timing_enabled(self):
        return load().cugl_event_is_timing_enabled(self._ptr)

    @property
    def is_blocking_sync(self):
        return load().cugl_event_is_blocking_sync(self._ptr)

    @property
    def is_ipc_enabled(self):
        return load().cugl_event_is_ipc_enabled(self._ptr)

    @property
    def is_closed(self):
        return load().cugl_event_is_closed(self._ptr)

    @property
    def is_done(self):
        """Whether the work the event marks has completed."""
        done = c_bool()
        load().cugl_event_query(self._ptr, byref(done))
        return done.value

    def sync(self):
        """Block until the event has completed."""
        load().cugl_event_sync(self._ptr)

    def __sub__(self, start):
        """Milliseconds from `start` to this event (both timing events,
        recorded and complete)."""
        if not isinstance(start, Event):
            return NotImplemented
        ms = c_float()
        load().cugl_event_elapsed_ms(byref(ms), start._ptr, self._ptr)
        return ms.value

    def close(self):
        """Destroy the event now; idempotent."""
        load().cugl_event_close(self._ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<Event handle=0x%x%s>" % (self.handle, " closed" if self.is_closed else "")


def as_stream(obj, what="stream"):
    """A Stream from a Stream, an object with __cuda_stream__ or PyTorch's."""
    if isinstance(obj, Stream):
        return obj
    if hasattr(obj, "__cuda_stream__") or isinstance(getattr(obj, "cuda_stream", None), int):
        return Stream.from_handle(obj)
    raise TypeError("%s must be a cugl Stream or have __cuda_stream__, not %s"
                    % (what, type(obj).__name__))


def stream_ptr(obj, what="stream"):
    """The cugl handle of a stream argument, None passing through as NULL;
    also the Stream itself, which the caller keeps alive across the call."""
    if obj is None:
        return None, None
    s = as_stream(obj, what)
    return s._ptr, s
