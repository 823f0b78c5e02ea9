"""Recording: the frames a viewer presents, kept as a video file
(cugl/app_record.h, where libcugl-app was built with a video encoder:
Meson features `serve_h264`, OpenH264, or `serve_video`, libvpx, with
`serve`). Each present hands its frame to cugl_app_recorder_frame just
before cugl_app_context_present (viewer.py's _finish); the recorder copies
it on the GPU and encodes it on a thread of its own, off the render loop.

The recorder is closed, which writes the file, by stop_recording(),
Recording.stop(), the end of a `with` block, Viewer.close() and the
viewer's finalizer (context.py's _Resources.free), each with the viewer's
context current. A failure to write the file is raised by the first four
(by a `with` block's end only where no other exception is on its way; then
it is a warning), and is a warning from the finalizer.
"""
import collections
import numbers
import os
import threading
import warnings
import weakref
from ctypes import byref, c_void_p

from .. import _app_lib
from .. import _errors
from .._app_structs import RECORD_CLOCK, RECORD_CODEC, AppRecordCounts, AppRecorderDesc

RecordCounts = collections.namedtuple(
    "RecordCounts", ["kept", "written", "dropped", "behind", "waited_ms", "encode_ms", "bytes"])
RecordCounts.__doc__ = """What a recording has done (cugl_app_record_counts): frames kept,
written to the file, dropped (the encoder was behind), kept and not yet
written; the milliseconds presents waited for the encoder in all
(keep_every_frame), the encoder's milliseconds a frame on average; the
file's bytes so far. Once stopped: every kept frame written, none behind,
and the finished file's size (encode_ms the average of the frames written
before the stop)."""

_C_INT = (-2**31, 2**31 - 1)


class Recording:
    """A recording of a viewer's frames into a video file, made by
    Viewer.record(). A context manager: leaving the `with` block stops it.

    path: the file, as given to record().
    counts: a RecordCounts, read now (the final ones once stopped).
    is_recording: not yet stopped.
    stop(): finishes the file and returns the final counts (stopped
        already: those again).
    """

    def __init__(self, viewer, ptr, path):
        self._path = path
        self._viewer = weakref.ref(viewer)  # the viewer holds this; not the other way
        self._ptr = ptr
        self._final = None
        # cugl_app_recorder_counts may be called from any thread while the
        # recorder lives: the lock keeps close from freeing it meanwhile.
        self._lock = threading.Lock()

    @property
    def path(self):
        return self._path

    @property
    def is_recording(self):
        return self._ptr is not None

    @property
    def counts(self):
        with self._lock:
            return self._final if self._ptr is None else self._read()

    def stop(self):
        """Finish the file (cugl_app_recorder_close) and return the final
        counts; raises the recorder's failure (the file is then not
        written, and what was at the path stays as it was)."""
        viewer = self._viewer()
        if self._ptr is None or viewer is None:
            return self._final  # stopped, or the viewer's finalizer closed it
        return viewer._stop_recording(self)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.stop()
            return
        try:
            self.stop()
        except _errors.CuglError as e:
            _warn_unfinished(self, e)  # the exception on its way is the one to raise

    def __repr__(self):
        c = self.counts
        return "<Recording %s %s, %d frames kept>" % (
            os.fsdecode(self._path), "recording" if self.is_recording else "stopped",
            c.kept if c else 0)

    def _read(self):
        c = AppRecordCounts()
        _app_lib.load().cugl_app_recorder_counts(self._ptr, byref(c))
        return RecordCounts(c.kept, c.written, c.dropped, c.behind, c.waited_ms, c.encode_ms,
                            c.bytes)

    def _close(self):
        """Close the recorder, with its context current: the final counts,
        or the recorder's failure raised. Once only."""
        with self._lock:
            if self._ptr is None:
                return self._final
            ptr, last = self._ptr, self._read()
            self._ptr, self._final = None, last
            _app_lib.load().cugl_app_recorder_close(ptr)
            # Closed without a failure: every frame kept was written, and the
            # index after them.
            try:
                size = os.stat(self._path).st_size
            except OSError:
                size = last.bytes
            self._final = last._replace(written=last.kept, behind=0, bytes=size)
            return self._final


def _warn_unfinished(rec, error):
    warnings.warn("cugl: the recording %s was not finished: %s" % (os.fsdecode(rec.path), error),
                  RuntimeWarning, stacklevel=3)


def _c_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("Viewer.record: %s is an int, not %r" % (name, value))
    if not _C_INT[0] <= value <= _C_INT[1]:
        raise ValueError("Viewer.record: %s is %d: past a C int" % (name, value))
    return int(value)


def _desc(fps, kbps, size, clock, keep_every_frame, codec, same_bytes):
    """The cugl_app_recorder_desc of record()'s arguments, their types and
    names checked (their ranges are the C library's to check)."""
    if isinstance(fps, bool) or not isinstance(fps, numbers.Real):
        raise TypeError("Viewer.record: fps is a number of frames a second, not %r" % (fps,))
    if size is None:
        width = height = 0
    else:
        try:
            width, height = size
        except (TypeError, ValueError):
            raise TypeError("Viewer.record: size is a (width, height) pair or None, not %r"
                            % (size,)) from None
        width, height = _c_int("size's width", width), _c_int("size's height", height)
    if not isinstance(clock, str) or clock not in RECORD_CLOCK:
        raise ValueError("Viewer.record: clock %r is none of %s" % (
            clock, ", ".join(repr(c) for c in RECORD_CLOCK)))
    if codec is not None and (not isinstance(codec, str) or codec not in RECORD_CODEC):
        raise ValueError("Viewer.record: codec %r is none of None, %s" % (
            codec, ", ".join(repr(c) for c in RECORD_CODEC if c)))
    return AppRecorderDesc(fps=float(fps), kbps=_c_int("kbps", kbps), width=width,
                           height=height, clock=RECORD_CLOCK[clock],
                           keep_every_frame=bool(keep_every_frame), codec=RECORD_CODEC[codec],
                           same_bytes=bool(same_bytes))


def _encoded_path(path):
    try:
        name = os.fspath(path)
    except TypeError:
        raise TypeError("Viewer.record: path is a str, bytes or os.PathLike, not %r"
                        % (path,)) from None
    encoded = os.fsencode(name)
    if b"\0" in encoded:
        raise ValueError("Viewer.record: path %r holds a NUL character" % (name,))
    return name, encoded


class _Recording:
    """Viewer's record(), stop_recording() and recording."""

    def record(self, path, *, fps=60, kbps=0, size=None, clock="fixed", keep_every_frame=False,
               codec=None, same_bytes=False):
        """Record the frames presented from now on (show(), frame(),
        present()) into the video file `path` (cugl/app_record.h): ".mp4"
        is H.264, ".webm" VP8 (or VP9: codec="vp9"). Returns a Recording,
        a context manager:

            with viewer.record("run.mp4", keep_every_frame=True):
                for step in range(600):
                    viewer.show(picture(step))

        The file appears at `path` when the recording stops
        (stop_recording(), Recording.stop(), the `with` block's end,
        close()); until then it is written beside it as
        ".<name>.<pid>-<n>.tmp", and a file already at `path` stays as it
        was where the recording fails.

        fps: frames a second, 1 to 60: frame i is at i / fps seconds with
            the "fixed" clock, and the encoder's budget of bits a frame.
        kbps: the bitrate, kbit/s; 0: 0.1 bit a pixel a frame.
        size: (width, height) to scale every frame to (each from 16 to
            8192, an odd width or height rounded down); None: the
            framebuffer's at the first frame.
        clock: "fixed" (frame i at i / fps) or "wall" (each frame at the
            time it was presented).
        keep_every_frame: where the encoder is 8 frames behind, a present
            waits for it rather than drop the frame.
        codec: "h264" (.mp4), "vp8" or "vp9" (.webm); None: the
            container's (H.264, VP8).
        same_bytes: with the "fixed" clock the same frames make the same
            bytes; the encoders run on fewer threads (slower).

        Raises TypeError or ValueError for arguments of the wrong type, an
        unknown clock or codec or a size that is no pair;
        cugl.InvalidArgumentError for what libcugl-app refuses (a name that
        ends in neither .mp4 nor .webm, a codec its container does not
        hold, fps, kbps or size out of range, a folder that does not exist
        or cannot be written); cugl.NotSupportedError where this
        libcugl-app has no recorder, or not the codec; cugl.InvalidStateError while a recording runs. A
        failure of the recorder while it runs (a full disk) is raised by
        the present that meets it, which ends the recording (no file).
        """
        self._enter("record", turn_ok=True)
        name, encoded = _encoded_path(path)
        desc = _desc(fps, kbps, size, clock, keep_every_frame, codec, same_bytes)
        res = self._res
        if res.recording is not None:
            raise _errors.InvalidStateError(
                "Viewer.record: already recording %s; stop_recording() first"
                % os.fsdecode(res.recording.path))
        if not _app_lib.has("record"):
            raise _errors.NotSupportedError(
                "Viewer.record: this libcugl-app was built without the recorder: it needs a "
                "video encoder (Meson feature `serve_h264` with Debian's libopenh264-dev, or "
                "`serve_video` with libvpx-dev; each with `serve`)")
        out = c_void_p()
        _app_lib.load().cugl_app_recorder_create(byref(out), res.ctx, encoded, byref(desc))
        res.recording = Recording(self, out.value, name)
        return res.recording

    @property
    def recording(self):
        """The Recording under way, or None."""
        return self._res.recording

    def stop_recording(self):
        """Finish the recording's file and return its final counts (a
        RecordCounts); None where nothing is being recorded. Raises the
        recorder's failure (cugl.InvalidArgumentError for a write or the
        rename, cugl.InvalidStateError where no frame was kept): the file
        is then not made."""
        rec = self._res.recording
        if rec is None:
            return None
        return self._stop_recording(rec)

    def _stop_recording(self, rec):
        self._enter("stop_recording")
        if self._res.recording is rec:
            self._res.recording = None
        return rec._close()

    def _record_frame(self):
        """Keep the frame about to be presented (_finish): None, or the
        recorder's failure, which ends the recording (after one it keeps
        nothing more; its close would say the same again)."""
        rec = self._res.recording
        try:
            _app_lib.load().cugl_app_recorder_frame(rec._ptr)
        except _errors.CuglError as e:
            self._res.recording = None
            try:
                rec._close()
            except _errors.CuglError:
                pass
            return e
        return None

    def _end_recording(self, in_flight=False):
        """The recording, if any, finished as the viewer closes: None, or
        its failure to raise; with another exception `in_flight`, that one
        is the one to raise, and the failure a warning."""
        res = self._res
        rec = res.recording
        if rec is None or res.freed:
            return None
        res.recording = None
        try:
            res.make_current()
        except _errors.CuglError:
            pass  # close's GL calls then say what is wrong
        try:
            rec._close()
        except _errors.CuglError as e:
            if not in_flight:
                return e
            _warn_unfinished(rec, e)
        return None
