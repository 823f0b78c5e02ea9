"""The C structs of libcugl-app's public headers (lib/app/include/cugl/app*.h)
that the viewer passes, as ctypes structures.

Each mirrors one typedef field for field; the python suite compiles a probe
against the headers and compares every size and offset (tests/test_abi.py),
as for the core's structs in _structs.py. Enums are int-sized.
"""
import ctypes
from ctypes import (c_bool, c_char_p, c_double, c_float, c_int, c_long, c_longlong, c_size_t,
                    c_uint64, c_void_p)


class AppContextDesc(ctypes.Structure):
    """cugl_app_context_desc (app_context.h)."""
    _fields_ = [
        ("mode", c_int),
        ("width", c_int),
        ("height", c_int),
        ("title", c_char_p),
        ("no_vsync", c_bool),
        ("cuda_device", c_int),
        ("debug", c_bool),
    ]


class AppTargetDesc(ctypes.Structure):
    """cugl_app_target_desc (app_target.h)."""
    _fields_ = [
        ("kind", c_int),
        ("direction", c_int),
        ("interop", c_int),
        ("format", c_int),
        ("width", c_int),
        ("height", c_int),
        ("depth", c_int),
        ("size", c_size_t),
        ("initial", c_void_p),
        ("device", c_void_p),
        ("writers", c_void_p),
        ("writer_count", c_int),
        ("pipelined", c_bool),
        ("timer", c_void_p),
    ]


class AppAccess(ctypes.Structure):
    """cugl_app_access (app_target.h)."""
    _fields_ = [("ptr", c_uint64), ("pitch", c_uint64), ("slice", c_uint64),
                ("size", c_uint64), ("surface", c_uint64), ("texture", c_uint64)]


class AppEvent(ctypes.Structure):
    """cugl_app_event (app_input.h)."""
    _fields_ = [
        ("frame", c_long),
        ("type", c_int),
        ("x", c_double),
        ("y", c_double),
        ("code", c_int),
        ("down", c_bool),
        ("width", c_int),
        ("height", c_int),
    ]


class AppInput(ctypes.Structure):
    """cugl_app_input (app_input.h)."""
    _fields_ = [
        ("x", c_double), ("y", c_double), ("dx", c_double), ("dy", c_double),
        ("scroll", c_double),
        ("left", c_bool), ("right", c_bool), ("middle", c_bool),
        ("shift", c_bool), ("ctrl", c_bool),
    ]


class AppServerDesc(ctypes.Structure):
    """cugl_app_server_desc (app_serve.h)."""
    _fields_ = [
        ("address", c_char_p),
        ("port", c_int),
        ("token", c_char_p),
        ("name", c_char_p),
        ("quality", c_int),
        ("encoders", c_int),
        ("window", c_int),
        ("codec", c_int),     # cugl_app_serve_codec
        ("cert", c_char_p),
        ("key", c_char_p),
        ("encoder", c_int),   # cugl_app_serve_encoder
    ]


class AppRecorderDesc(ctypes.Structure):
    """cugl_app_recorder_desc (app_record.h)."""
    _fields_ = [
        ("fps", c_double),
        ("kbps", c_int),
        ("width", c_int),
        ("height", c_int),
        ("clock", c_int),     # cugl_app_record_clock
        ("keep_every_frame", c_bool),
        ("codec", c_int),     # cugl_app_record_codec
        ("same_bytes", c_bool),
    ]


class AppMeshDesc(ctypes.Structure):
    """cugl_app_mesh_desc (app_draw.h)."""
    _fields_ = [
        ("positions", c_void_p),
        ("components", c_int),
        ("scalars", c_void_p),
        ("indices", c_void_p),
        ("colormap", c_int),
        ("vmin", c_float),
        ("vmax", c_float),
        ("rgba", c_float * 4),
        ("shading", c_int),
    ]


class AppColorbarDesc(ctypes.Structure):
    """cugl_app_colorbar_desc (app_draw.h)."""
    _fields_ = [
        ("colormap", c_int),
        ("vmin", c_float),
        ("vmax", c_float),
        ("x", c_int),
        ("y", c_int),
        ("width", c_int),
        ("height", c_int),
        ("ticks", c_int),
        ("text_pixels", c_float),
        ("rgba", c_float * 4),
    ]


class AppVolumeDesc(ctypes.Structure):
    """cugl_app_volume_desc (app_draw.h)."""
    _fields_ = [
        ("volume", c_void_p),
        ("min", c_float * 3),
        ("max", c_float * 3),
        ("colormap", c_int),
        ("vmin", c_float),
        ("vmax", c_float),
        ("density", c_float),
        ("steps", c_int),
    ]


# cugl_app_colormap and cugl_app_shading by the names Viewer.mesh takes.
COLORMAP = {"cugl": 0, "grey": 1}
SHADING = {"flat": 0, "none": 1}


class AppRecordCounts(ctypes.Structure):
    """cugl_app_record_counts (app_record.h)."""
    _fields_ = [
        ("kept", c_long),
        ("written", c_long),
        ("dropped", c_long),
        ("behind", c_long),
        ("waited_ms", c_double),
        ("encode_ms", c_double),
        ("bytes", c_longlong),
    ]


# cugl_app_record_clock's values by the names Viewer.record takes.
RECORD_CLOCK = {"fixed": 0, "wall": 1}
# cugl_app_record_codec by name (None: the container's).
RECORD_CODEC = {None: 0, "h264": 1, "vp8": 2, "vp9": 3}

# Every struct above by its C name, for the layout probe's comparison.
BY_C_NAME = {
    "cugl_app_context_desc": AppContextDesc,
    "cugl_app_target_desc": AppTargetDesc,
    "cugl_app_access": AppAccess,
    "cugl_app_event": AppEvent,
    "cugl_app_input": AppInput,
    "cugl_app_server_desc": AppServerDesc,
    "cugl_app_recorder_desc": AppRecorderDesc,
    "cugl_app_record_counts": AppRecordCounts,
    "cugl_app_mesh_desc": AppMeshDesc,
    "cugl_app_colorbar_desc": AppColorbarDesc,
    "cugl_app_volume_desc": AppVolumeDesc,
}
# The enum values above by their C names, which the probe prints too.
ENUM_VALUES = {
    "CUGL_APP_RECORD_CLOCK_FIXED": RECORD_CLOCK["fixed"],
    "CUGL_APP_RECORD_CLOCK_WALL": RECORD_CLOCK["wall"],
    "CUGL_APP_RECORD_CODEC_DEFAULT": RECORD_CODEC[None],
    "CUGL_APP_RECORD_CODEC_H264": RECORD_CODEC["h264"],
    "CUGL_APP_RECORD_CODEC_VP8": RECORD_CODEC["vp8"],
    "CUGL_APP_RECORD_CODEC_VP9": RECORD_CODEC["vp9"],
    "CUGL_APP_COLORMAP_CUGL": COLORMAP["cugl"],
    "CUGL_APP_COLORMAP_GREY": COLORMAP["grey"],
    "CUGL_APP_SHADING_FLAT": SHADING["flat"],
    "CUGL_APP_SHADING_NONE": SHADING["none"],
}
# What belongs to an optional part of libcugl-app (a struct or an enum
# value, by C name): the macro that says the build has it, its header, and
# the part's name for _app_lib.has().
_SERVE = ("CUGL_APP_HAS_SERVE", "cugl/app_serve.h", "serve")
_RECORD = ("CUGL_APP_HAS_RECORD", "cugl/app_record.h", "record")
OPTIONAL_HEADER = {
    "cugl_app_server_desc": _SERVE,
    "cugl_app_recorder_desc": _RECORD,
    "cugl_app_record_counts": _RECORD,
    "CUGL_APP_RECORD_CLOCK_FIXED": _RECORD,
    "CUGL_APP_RECORD_CLOCK_WALL": _RECORD,
    "CUGL_APP_RECORD_CODEC_DEFAULT": _RECORD,
    "CUGL_APP_RECORD_CODEC_H264": _RECORD,
    "CUGL_APP_RECORD_CODEC_VP8": _RECORD,
    "CUGL_APP_RECORD_CODEC_VP9": _RECORD,
}
