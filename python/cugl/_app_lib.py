"""Finding and loading libcugl-app (the GL side: contexts, targets, input,
the panel, the frame server, the recorder), and the C prototypes of what
the viewer calls.

libcugl-app is looked for, in this order:

1. the environment variable CUGL_APP_LIBRARY: a path to libcugl-app.so, a
   directory holding it, or a Meson build directory; when it is set nothing
   else is tried;
2. next to the libcugl this process loaded (the same directory, its app/
   subdirectory, or, in a Meson build directory, lib/core/'s sibling
   lib/app/), so that whatever names libcugl (CUGL_LIBRARY, the
   install-time choice, the system's search) names libcugl-app too;
3. the installed library: pkg-config's libdir of `cugl-app`, then the
   system's search.

_loader.Library does the looking (as for libcugl); this module says where,
and declares the prototypes. libcugl is loaded first: libcugl-app needs it,
and the dynamic loader then reuses that one (same soname) rather than
finding another.
"""
import ctypes
import os
from ctypes import POINTER, c_bool, c_char_p, c_float, c_int, c_long, c_size_t, c_uint32

from . import _errors, _lib, _loader, _notices
from ._app_structs import (AppAccess, AppColorbarDesc, AppContextDesc, AppEvent, AppInput,
                           AppMeshDesc, AppRecordCounts, AppRecorderDesc, AppServerDesc,
                           AppTargetDesc, AppVolumeDesc)

ENV = "CUGL_APP_LIBRARY"
SONAME = "libcugl-app.so.0"

STATUS = _lib.STATUS
P = ctypes.c_void_p
VARIADIC = "..."  # a prototype's last argtype: the C function takes more (printf-like)

# name: (restype, argtypes), as declared in lib/app/include/cugl/app_*.h
# (tests/test_abi.py compares them with the headers).
PROTOTYPES = {
    # app_context.h
    "cugl_app_context_create": (STATUS, [P, POINTER(AppContextDesc)]),
    "cugl_app_context_destroy": (None, [P]),
    "cugl_app_gl_proc": (P, [c_char_p]),
    "cugl_app_context_make_current": (STATUS, [P]),
    "cugl_app_context_is_headless": (c_bool, [P]),
    "cugl_app_context_platform": (c_char_p, [P]),
    "cugl_app_context_renderer": (c_char_p, [P]),
    "cugl_app_context_vendor": (c_char_p, [P]),
    "cugl_app_context_size": (None, [P, POINTER(c_int), POINTER(c_int)]),
    "cugl_app_context_framebuffer": (c_uint32, [P]),
    "cugl_app_context_should_close": (c_bool, [P]),
    "cugl_app_context_present": (STATUS, [P]),
    # (callback, user_data, previous, previous_user_data): the callback is
    # a cugl_app_message_callback (_notices.MESSAGE_CALLBACK), passed as a pointer
    "cugl_app_set_message_callback": (None, [P, P, P, P]),
    # app_input.h
    "cugl_app_context_input": (POINTER(AppInput), [P]),
    "cugl_app_key_down": (c_bool, [P, c_int]),
    "cugl_app_key_presses": (c_int, [P, c_int]),
    "cugl_app_event_parse": (STATUS, [POINTER(AppEvent), c_char_p]),
    "cugl_app_event_format": (c_int, [P, c_size_t, POINTER(AppEvent)]),
    "cugl_app_context_push_event": (STATUS, [P, POINTER(AppEvent)]),
    "cugl_app_context_frame": (c_long, [P]),
    "cugl_app_context_events": (POINTER(AppEvent), [P, POINTER(c_size_t), POINTER(c_size_t)]),
    # app_gl.h
    "cugl_app_program": (STATUS, [POINTER(c_uint32), c_char_p, c_char_p, c_char_p]),
    "cugl_app_blit_rgba8_buffer": (STATUS, [P, c_uint32, c_int, c_int, c_size_t]),
    "cugl_app_check_gl": (STATUS, [c_char_p, c_char_p]),
    "cugl_app_drain_gl_errors": (None, []),
    # app_image.h
    "cugl_app_read_pixels": (STATUS, [P, c_size_t, P]),
    "cugl_app_screenshot": (STATUS, [P, c_char_p]),
    "cugl_app_write_png": (STATUS, [c_char_p, c_char_p, c_int, c_int]),
    # app_interop.h
    "cugl_app_interop_name": (c_char_p, [c_int]),
    # app_target.h
    "cugl_app_target_create": (STATUS, [P, P, POINTER(AppTargetDesc)]),
    "cugl_app_target_destroy": (None, [P]),
    "cugl_app_target_cuda_begin": (STATUS, [P, P, POINTER(AppAccess)]),
    "cugl_app_target_cuda_end": (STATUS, [P, P]),
    "cugl_app_target_gl_begin": (STATUS, [P]),
    "cugl_app_target_gl_end": (STATUS, [P]),
    "cugl_app_target_copy_from": (STATUS, [P, P, P]),
    "cugl_app_target_draw": (STATUS, [P]),
    "cugl_app_target_draw_origin": (STATUS, [P, c_int]),
    # app_draw.h: the colour maps' tables (_colormap.py)
    "cugl_app_colormap_table": (STATUS, [c_int, POINTER(ctypes.c_uint8)]),
    "cugl_app_draw_mesh": (STATUS, [POINTER(AppMeshDesc), c_size_t, c_size_t, POINTER(c_float)]),
    "cugl_app_draw_lines": (STATUS, [POINTER(AppMeshDesc), c_size_t, c_size_t, POINTER(c_float)]),
    "cugl_app_draw_line_strip": (STATUS, [POINTER(AppMeshDesc), c_size_t, POINTER(c_float)]),
    "cugl_app_draw_points": (STATUS, [POINTER(AppMeshDesc), c_size_t, c_float, POINTER(c_float)]),
    "cugl_app_draw_text": (STATUS, [P, c_char_p, c_float, c_float, c_float, POINTER(c_float)]),
    "cugl_app_text_width": (STATUS, [P, c_char_p, c_float, POINTER(c_int)]),
    "cugl_app_draw_colorbar": (STATUS, [P, POINTER(AppColorbarDesc)]),
    "cugl_app_draw_volume": (STATUS, [POINTER(AppVolumeDesc), POINTER(c_float)]),
    "cugl_app_target_draw_points": (STATUS, [P, c_size_t, c_int, POINTER(c_float), c_float,
                                             POINTER(c_float)]),
    "cugl_app_target_gl_name": (c_uint32, [P]),
    "cugl_app_target_interop": (c_int, [P]),
    "cugl_app_target_reason": (c_char_p, [P]),
    "cugl_app_target_size": (None, [P, POINTER(c_int), POINTER(c_int), POINTER(c_int),
                                    POINTER(c_size_t)]),
}

# The optional parts (Meson features `ui`, `serve`, and a video encoder for
# the recorder: `serve_h264` or `serve_video`): each present or absent
# whole, as CUGL_APP_HAS_UI, _SERVE and _RECORD say in the headers.
UI_PROTOTYPES = {
    # app_ui.h
    "cugl_app_ui_create": (STATUS, [P, P]),
    "cugl_app_ui_destroy": (None, [P]),
    "cugl_app_ui_begin": (None, [P, c_float, c_char_p]),
    "cugl_app_ui_slider_float": (c_bool, [P, c_char_p, POINTER(c_float), c_float, c_float]),
    "cugl_app_ui_slider_int": (c_bool, [P, c_char_p, POINTER(c_int), c_int, c_int]),
    "cugl_app_ui_checkbox": (c_bool, [P, c_char_p, POINTER(c_bool)]),
    "cugl_app_ui_combo": (c_bool, [P, c_char_p, POINTER(c_int), POINTER(c_char_p), c_int]),
    "cugl_app_ui_text": (None, [P, c_char_p, VARIADIC]),
    "cugl_app_ui_end": (STATUS, [P]),
    "cugl_app_ui_wants_mouse": (c_bool, [P]),
}
SERVE_PROTOTYPES = {
    # app_serve.h
    "cugl_app_server_create": (STATUS, [P, P, POINTER(AppServerDesc)]),
    "cugl_app_server_destroy": (None, [P]),
    "cugl_app_server_frame": (STATUS, [P]),
    "cugl_app_server_set_stats": (STATUS, [P, c_char_p]),
    "cugl_app_server_port": (c_int, [P]),
    "cugl_app_server_address": (c_char_p, [P, c_int]),
    "cugl_app_server_viewers": (c_int, [P]),
    "cugl_app_server_counts": (None, [P, POINTER(c_long), POINTER(c_long), POINTER(c_long)]),
}
RECORD_PROTOTYPES = {
    # app_record.h
    "cugl_app_recorder_create": (STATUS, [P, P, c_char_p, POINTER(AppRecorderDesc)]),
    "cugl_app_recorder_frame": (STATUS, [P]),
    "cugl_app_recorder_counts": (STATUS, [P, POINTER(AppRecordCounts)]),
    "cugl_app_recorder_close": (STATUS, [P]),
}
OPTIONAL = {"ui": UI_PROTOTYPES, "serve": SERVE_PROTOTYPES, "record": RECORD_PROTOTYPES}

ALL_PROTOTYPES = dict(PROTOTYPES, **UI_PROTOTYPES, **SERVE_PROTOTYPES, **RECORD_PROTOTYPES)


def _declare(cdll):
    missing = [name for name in PROTOTYPES if not hasattr(cdll, name)]
    if missing:
        raise OSError("it lacks " + ", ".join(missing) +
                      " (a libcugl-app older than this package?)")
    parts = {}
    for part, table in OPTIONAL.items():
        have = [name for name in table if hasattr(cdll, name)]
        if have and len(have) != len(table):
            raise OSError("it has part of its %s (%s) but lacks %s" % (
                part, ", ".join(have), ", ".join(n for n in table if n not in have)))
        parts[part] = bool(have)
    core = _lib.load()
    last_error, last_cuda_result = core.cugl_last_error, core.cugl_last_cuda_result

    def raise_on_failure(result, func, args):
        if result == 0:
            return result
        # libcugl-app reports through libcugl: its message is libcugl's
        # cugl_last_error() of this thread, read before any other call.
        raise _errors.error_for(result, last_error().decode("utf-8", "replace"),
                                last_cuda_result())

    for name, (restype, argtypes) in ALL_PROTOTYPES.items():
        if not hasattr(cdll, name):
            continue
        fn = getattr(cdll, name)
        if argtypes and argtypes[-1] == VARIADIC:
            fn.argtypes = argtypes[:-1]  # ctypes passes further arguments as given
        else:
            fn.argtypes = argtypes
        fn.restype = c_int if restype == STATUS else restype
        if restype == STATUS:
            fn.errcheck = raise_on_failure
    _notices.install(cdll)  # its notices become warnings (cugl.AppNotice)
    return parts


def _next_to_libcugl():
    """The candidate between CUGL_APP_LIBRARY and the installed library:
    installed, beside libcugl; in a Meson build directory, lib/core/'s
    sibling lib/app/."""
    core_dir = os.path.dirname(_lib.library_path())
    if core_dir:
        sibling = os.path.join(os.path.dirname(core_dir), "app")
        path = _Loaded.in_directory(core_dir) or _loader.in_directory(sibling, _Loaded.names, ())
        yield ("next to libcugl (%s)" % core_dir, path,
               None if path else "no libcugl-app.so in %s, %s or %s" % (
                   core_dir, os.path.join(core_dir, "app"), sibling))


# libcugl-app (in a directory, its app/ subdirectory, or a Meson build
# directory's lib/app/), and once loaded its CDLL (_Loaded.cdll), path and
# parts (_Loaded.declared).
_Loaded = _loader.Library(
    ("libcugl-app.so", SONAME), ENV, ("app", os.path.join("lib", "app")), "cugl-app",
    _declare, more=_next_to_libcugl,
    title="libcugl-app (cugl's GL side, which the viewer needs)",
    advice="Build cugl with libcugl-app (its GLFW, cglm, libpng and GLAD dependencies; "
           "see the README) or set %s=<build>/lib/app/libcugl-app.so." % ENV)


def load():
    """The loaded libcugl-app (a ctypes.CDLL: every call releases the GIL),
    loading it (and libcugl before it) once."""
    if _Loaded.cdll is not None:
        return _Loaded.cdll
    _lib.load()
    return _Loaded.load()


def library_path():
    """The path of the libcugl-app this process uses (loading it if needed)."""
    load()
    return _Loaded.path


def has(part):
    """Whether the loaded libcugl-app was built with `part`: "ui" (the
    panel, Dear ImGui), "serve" (the frame server) or "record" (the
    recorder: video files)."""
    load()
    return _Loaded.declared[part]
