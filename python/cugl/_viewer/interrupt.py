"""Ctrl-C while a viewer's loop runs: the loop ends as if the window were
closed, rather than with a KeyboardInterrupt from inside a show().

    while not v.should_close:   # Ctrl-C: should_close turns True, the
        v.show(step())          # loop ends, the code after it runs

The first SIGINT that comes while viewers are presenting (those that
presented in the last LOOP_GAP seconds) asks them to close: each one's
should_close is True until its next present after it was asked. The frame
being made when the Ctrl-C came is drawn (its loop had no chance to ask);
a loop that then does not ask should_close gets KeyboardInterrupt at its
next call that draws (show, present, frame), so Ctrl-C stops any loop,
between two frames, never inside a call into libcugl-app or a frame()
turn. A
second Ctrl-C before that, or one when no viewer is presenting (the program
busy elsewhere, or at an interactive prompt), is Python's own
KeyboardInterrupt at once.

The handler is put in place by the viewer's calls that draw, on the main
thread, and only over Python's default handler (signal.default_int_handler):
a program's own SIGINT handler is left alone. In Jupyter the kernel puts the
default handler back for each cell and its own after it, so the same holds
there: interrupting the kernel ends the cell's loop, and the viewer stays
open for the next cell.
"""
import signal
import sys
import threading
import time
import weakref

# A viewer that presented this recently is in a loop (seconds).
LOOP_GAP = 1.0

_viewers = weakref.WeakSet()  # the open viewers, told of a Ctrl-C
_main = threading.main_thread()


def arm(viewer):
    """Called by a viewer's calls that draw: the handler in place where
    Python's default one is (the main thread only: signals go there)."""
    _viewers.add(viewer)
    if threading.current_thread() is not _main:
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def forget(viewer):
    _viewers.discard(viewer)
    if not _viewers and threading.current_thread() is _main and \
            signal.getsignal(signal.SIGINT) is _on_sigint:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _on_sigint(signum, frame):
    # Python's own handler from now on: a second Ctrl-C is immediate.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    now = time.perf_counter()
    looping = [v for v in list(_viewers)
               if not v.is_closed and v._last_frame_time is not None and
               now - v._last_frame_time < LOOP_GAP]
    if not looping:
        raise KeyboardInterrupt
    for v in looping:
        v._interrupt = "asked"
    print("cugl: Ctrl-C: the viewer closes at the end of this frame (press it again to stop "
          "at once)", file=sys.stderr, flush=True)
