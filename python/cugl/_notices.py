"""libcugl-app's notices in Python: what it has to say that is no failure
of a call (GL's debug output of a debug context, the frame server falling
back from its GPU encoder to the CPU's, a frame it could not encode).

The C library hands them to cugl_app_set_message_callback's callback and
never writes to stderr itself. When this package loads libcugl-app it sets
that callback (unless the program already set one, which it leaves in
place): each notice becomes a warning of category cugl.AppNotice, shown
as coming from "libcugl-app". Warnings rather than logging: a Python user
sees them without configuring anything, and filters them as any warning
(warnings.simplefilter("ignore", cugl.AppNotice), -W, pytest.warns); under
the default filter a notice of the same text is shown once. A filter that
makes them errors cannot raise through C (the notice comes inside a call
into the library, or on a thread of its own): ctypes hands that exception
to sys.unraisablehook, and the library's call goes on.

The callback comes on the thread that has the notice: the viewer's own
(GL's debug output is synchronous) or one the library made (the frame
server's encoders), which Python never saw. ctypes takes the GIL for it, so
it runs as any Python code of another thread does. The callback object is
kept alive for the process's lifetime (C may hold its address until a call
under way returns), and the callback is unset at exit, before the
interpreter can no longer take threads in.
"""
import atexit
import ctypes
import warnings
from ctypes import c_char_p, c_void_p


class AppNotice(UserWarning):
    """A notice of libcugl-app's (GL's debug output, the frame server's
    encoders), as the library words it. See cugl/_notices.py."""


# cugl_app_message_callback (app_context.h)
MESSAGE_CALLBACK = ctypes.CFUNCTYPE(None, c_char_p, c_void_p)


def _notice(message, user_data):
    # On any thread; the GIL is ours for the call. A filter that makes
    # AppNotice an error raises here: ctypes hands that exception to
    # sys.unraisablehook, as it must not reach C.
    text = message.decode("utf-8", "replace") if message else ""
    # Shown as coming from the library (no Python line has it), with a
    # registry of its own for the "once per text" of the default filter.
    warnings.warn_explicit(text, AppNotice, "libcugl-app", 0, module=__name__,
                           registry=_registry)


_registry = {}


_callback = MESSAGE_CALLBACK(_notice)
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_callback))  # never freed: see above


class _Installed:
    cdll = None  # the libcugl-app whose callback is ours


def install(cdll):
    """Route the notices of `cdll` (libcugl-app, prototypes declared) to
    warnings, where the program has not set a callback of its own.
    Returns whether ours is now the one."""
    previous, previous_data = c_void_p(), c_void_p()
    cdll.cugl_app_set_message_callback(_callback, None, ctypes.byref(previous),
                                       ctypes.byref(previous_data))
    if previous.value and previous.value != address():
        # The program's own (an embedding program's): put back as it was.
        cdll.cugl_app_set_message_callback(previous, previous_data, None, None)
        return False
    if _Installed.cdll is None:
        atexit.register(_uninstall)
    _Installed.cdll = cdll
    return True


def address():
    """The C address of the callback this module sets."""
    return ctypes.cast(_callback, c_void_p).value


def _uninstall():
    cdll, _Installed.cdll = _Installed.cdll, None
    if cdll is None:
        return
    previous, previous_data = c_void_p(), c_void_p()
    cdll.cugl_app_set_message_callback(None, None, ctypes.byref(previous),
                                       ctypes.byref(previous_data))
    if previous.value and previous.value != address():
        # Set since by the program: not ours to unset.
        cdll.cugl_app_set_message_callback(previous, previous_data, None, None)
