"""Finding and loading libcugl, and the C prototypes of what this package calls.

The library is looked for, in this order:

1. the environment variable CUGL_LIBRARY: a path to libcugl.so (or to a
   directory holding it, or to a Meson build directory whose lib/core/
   does); when it is set nothing else is tried;
2. the library named when the package was installed (CUGL_LIBRARY at
   `pip install` time is written into the installed package);
3. the installed library: pkg-config's libdir of the `cugl` package, then
   the system's search (ctypes.util.find_library, the dynamic loader).

_loader.Library does the looking (as for libcugl-app); this module says
where, and declares the prototypes. Loading happens at the first call that
needs libcugl, so `import cugl` always works; `cugl.library_path()` loads
it and says which file it is.
"""
import os
from ctypes import (POINTER, c_bool, c_char_p, c_float, c_int, c_int64, c_size_t, c_uint,
                    c_uint32, c_uint64, c_void_p)

from . import _errors, _loader
from ._structs import (ArrayDesc, DeviceMemoryDesc, DeviceProperties, DLPackImportDesc,
                       DType, EventDesc, Layout, ManagedMemoryDesc, PinnedMemoryDesc,
                       PoolStats, Slice, StreamDesc, ViewCopyDesc)

ENV = "CUGL_LIBRARY"
SONAME = "libcugl.so.0"

STATUS = "status"  # marks a function that returns cugl_status: failures raise

P = c_void_p  # every opaque handle, and out-parameters passed with byref()

# name: (restype, argtypes). Only what the package calls; each row is the
# declaration in lib/core/include/cugl/<module>.h (tests/test_abi.py compares them).
PROTOTYPES = {
    # error.h
    "cugl_status_name": (c_char_p, [c_int]),
    "cugl_status_description": (c_char_p, [c_int]),
    "cugl_last_error": (c_char_p, []),
    "cugl_last_status": (c_int, []),
    "cugl_last_cuda_result": (c_int, []),
    "cugl_clear_error": (None, []),
    # device.h
    "cugl_device_count": (STATUS, [POINTER(c_int)]),
    "cugl_device_get": (STATUS, [P, c_int]),
    "cugl_device_get_current": (STATUS, [P]),
    "cugl_device_ordinal": (c_int, [P]),
    "cugl_device_get_properties": (STATUS, [P, POINTER(DeviceProperties)]),
    "cugl_device_set_current": (STATUS, [P]),
    "cugl_device_is_initialized": (c_bool, [P]),
    "cugl_device_can_access_peer": (STATUS, [POINTER(c_bool), P, P]),
    "cugl_device_enable_peer_access": (STATUS, [P, P]),
    "cugl_device_sync": (STATUS, [P]),
    "cugl_device_memory_info": (STATUS, [P, POINTER(c_size_t), POINTER(c_size_t)]),
    "cugl_live_objects": (c_int64, []),
    "cugl_live_bytes": (c_int64, []),
    "cugl_device_handle": (c_int, [P]),
    "cugl_device_context_handle": (P, [P]),
    "cugl_driver_version": (STATUS, [POINTER(c_int)]),
    # stream.h
    "cugl_stream_create": (STATUS, [P, P, POINTER(StreamDesc)]),
    "cugl_stream_from_handle": (STATUS, [P, P]),
    "cugl_device_default_stream": (STATUS, [P, P]),
    "cugl_stream_sync": (STATUS, [P]),
    "cugl_stream_query": (STATUS, [P, POINTER(c_bool)]),
    "cugl_stream_wait_event": (STATUS, [P, P]),
    "cugl_stream_wait_stream": (STATUS, [P, P]),
    "cugl_stream_record": (STATUS, [P, P]),
    "cugl_stream_is_nonblocking": (c_bool, [P]),
    "cugl_stream_priority": (c_int, [P]),
    "cugl_stream_device": (P, [P]),
    "cugl_stream_handle": (P, [P]),
    "cugl_stream_is_closed": (c_bool, [P]),
    "cugl_stream_close": (None, [P]),
    "cugl_stream_retain": (P, [P]),
    "cugl_stream_release": (None, [P]),
    # event.h
    "cugl_event_create": (STATUS, [P, P, POINTER(EventDesc)]),
    "cugl_event_record": (STATUS, [P, P]),
    "cugl_event_sync": (STATUS, [P]),
    "cugl_event_query": (STATUS, [P, POINTER(c_bool)]),
    "cugl_event_elapsed_ms": (STATUS, [POINTER(c_float), P, P]),
    "cugl_event_is_timing_enabled": (c_bool, [P]),
    "cugl_event_is_blocking_sync": (c_bool, [P]),
    "cugl_event_is_ipc_enabled": (c_bool, [P]),
    "cugl_event_device": (P, [P]),
    "cugl_event_handle": (P, [P]),
    "cugl_event_is_closed": (c_bool, [P]),
    "cugl_event_close": (None, [P]),
    "cugl_event_release": (None, [P]),
    # memory.h
    "cugl_device_memory_resource_create": (STATUS, [P, P, POINTER(DeviceMemoryDesc)]),
    "cugl_pinned_memory_resource_create": (STATUS, [P, P, POINTER(PinnedMemoryDesc)]),
    "cugl_managed_memory_resource_create": (STATUS, [P, P, POINTER(ManagedMemoryDesc)]),
    "cugl_legacy_pinned_memory_resource_create": (STATUS, [P, P]),
    "cugl_exportable_memory_resource_create": (STATUS, [P, P]),
    "cugl_memory_resource_allocate": (STATUS, [P, P, c_size_t, P]),
    "cugl_memory_resource_deallocate": (STATUS, [P, c_uint64, c_size_t, P]),
    "cugl_memory_resource_pool_stats": (STATUS, [P, POINTER(PoolStats)]),
    "cugl_memory_resource_trim": (STATUS, [P, c_size_t]),
    "cugl_memory_resource_kind": (c_int, [P]),
    "cugl_memory_resource_is_device_accessible": (c_bool, [P]),
    "cugl_memory_resource_is_host_accessible": (c_bool, [P]),
    "cugl_memory_resource_is_managed": (c_bool, [P]),
    "cugl_memory_resource_is_ipc_enabled": (c_bool, [P]),
    "cugl_memory_resource_is_stream_ordered": (c_bool, [P]),
    "cugl_memory_resource_device_id": (c_int, [P]),
    "cugl_memory_resource_device": (P, [P]),
    "cugl_memory_resource_pool_handle": (P, [P]),
    "cugl_memory_resource_is_closed": (c_bool, [P]),
    "cugl_memory_resource_close": (None, [P]),
    "cugl_memory_resource_retain": (P, [P]),
    "cugl_memory_resource_release": (None, [P]),
    # buffer.h
    "cugl_buffer_from_handle": (STATUS, [P, c_uint64, c_size_t, P]),
    "cugl_buffer_copy_to": (STATUS, [P, P, P]),
    "cugl_buffer_copy_from": (STATUS, [P, P, P]),
    "cugl_buffer_fill": (STATUS, [P, P, c_size_t, P]),
    "cugl_buffer_handle": (c_uint64, [P]),
    "cugl_buffer_size": (c_size_t, [P]),
    "cugl_buffer_device_id": (c_int, [P]),
    "cugl_buffer_memory_resource": (P, [P]),
    "cugl_buffer_is_device_accessible": (c_bool, [P]),
    "cugl_buffer_is_host_accessible": (c_bool, [P]),
    "cugl_buffer_is_managed": (c_bool, [P]),
    "cugl_buffer_set_deallocation_stream": (STATUS, [P, P]),
    "cugl_buffer_to_dlpack": (STATUS, [P, P]),
    "cugl_buffer_is_closed": (c_bool, [P]),
    "cugl_buffer_close": (STATUS, [P, P]),
    "cugl_buffer_retain": (P, [P]),
    "cugl_buffer_release": (None, [P]),
    # array.h
    "cugl_format_size": (c_size_t, [c_int]),
    "cugl_format_name": (c_char_p, [c_int]),
    "cugl_array_desc_validate": (STATUS, [POINTER(ArrayDesc)]),
    "cugl_array_create": (STATUS, [P, P, POINTER(ArrayDesc)]),
    "cugl_array_copy_from_host": (STATUS, [P, P, c_size_t, P]),
    "cugl_array_copy_to_host": (STATUS, [P, c_size_t, P, P]),
    "cugl_array_copy_from_buffer": (STATUS, [P, P, P]),
    "cugl_array_copy_to_buffer": (STATUS, [P, P, P]),
    "cugl_array_device": (P, [P]),
    "cugl_array_ndim": (c_int, [P]),
    "cugl_array_shape": (None, [P, POINTER(c_size_t)]),
    "cugl_array_layers": (c_size_t, [P]),
    "cugl_array_is_cubemap": (c_bool, [P]),
    "cugl_array_format": (c_int, [P]),
    "cugl_array_num_channels": (c_int, [P]),
    "cugl_array_is_surface_load_store": (c_bool, [P]),
    "cugl_array_element_size": (c_size_t, [P]),
    "cugl_array_size_bytes": (c_size_t, [P]),
    "cugl_array_handle": (P, [P]),
    "cugl_array_is_closed": (c_bool, [P]),
    "cugl_array_close": (None, [P]),
    "cugl_array_release": (None, [P]),
    # layout.h
    "cugl_layout_init": (STATUS, [POINTER(Layout), c_int, POINTER(c_int64),
                                  POINTER(c_int64), c_int64]),
    "cugl_layout_init_bytes": (STATUS, [POINTER(Layout), c_int, POINTER(c_int64),
                                        POINTER(c_int64), c_int64]),
    "cugl_layout_volume": (c_int64, [POINTER(Layout)]),
    "cugl_layout_strides_in_bytes": (STATUS, [POINTER(Layout), POINTER(c_int64)]),
    "cugl_layout_is_contiguous_c": (c_bool, [POINTER(Layout)]),
    "cugl_layout_is_contiguous_f": (c_bool, [POINTER(Layout)]),
    "cugl_layout_is_contiguous_any": (c_bool, [POINTER(Layout)]),
    "cugl_layout_is_dense": (c_bool, [POINTER(Layout)]),
    "cugl_layout_is_unique": (c_bool, [POINTER(Layout)]),
    "cugl_layout_reshaped": (STATUS, [POINTER(Layout), POINTER(Layout), c_int,
                                      POINTER(c_int64)]),
    "cugl_layout_permuted": (STATUS, [POINTER(Layout), POINTER(Layout), POINTER(c_int)]),
    "cugl_layout_sliced": (STATUS, [POINTER(Layout), POINTER(Layout), c_int, POINTER(Slice)]),
    "cugl_layout_repacked": (STATUS, [POINTER(Layout), POINTER(Layout), c_int64, c_uint64,
                                      c_int, c_bool]),
    # view.h
    "cugl_view_from_buffer": (STATUS, [P, P, POINTER(Layout), DType, c_bool]),
    "cugl_view_view": (STATUS, [P, P, POINTER(Layout), DType]),
    "cugl_view_from_dlpack": (STATUS, [P, P, POINTER(DLPackImportDesc)]),
    "cugl_view_from_dlpack_versioned": (STATUS, [P, P, POINTER(DLPackImportDesc)]),
    "cugl_view_to_dlpack": (STATUS, [P, P]),
    "cugl_view_to_dlpack_versioned": (STATUS, [P, P]),
    "cugl_view_copy_from": (STATUS, [P, P, P, POINTER(ViewCopyDesc)]),
    "cugl_view_ptr": (c_uint64, [P]),
    "cugl_view_device_id": (c_int, [P]),
    "cugl_view_is_device_accessible": (c_bool, [P]),
    "cugl_view_is_host_accessible": (c_bool, [P]),
    "cugl_view_readonly": (c_bool, [P]),
    "cugl_view_dtype": (DType, [P]),
    "cugl_view_layout": (POINTER(Layout), [P]),
    "cugl_view_buffer": (P, [P]),
    "cugl_view_retain": (P, [P]),
    "cugl_view_release": (None, [P]),
    # graphics.h
    "cugl_graphics_resource_from_gl_buffer": (STATUS, [P, P, c_uint32, c_uint]),
    "cugl_graphics_resource_from_gl_image": (STATUS, [P, P, c_uint32, c_uint32, c_uint]),
    "cugl_graphics_resource_map": (STATUS, [P, P, P]),
    "cugl_graphics_resource_map_array": (STATUS, [P, P, P, c_uint, c_uint]),
    "cugl_graphics_resource_unmap": (STATUS, [P, P]),
    "cugl_graphics_resource_set_unmap_stream": (STATUS, [P, P]),
    "cugl_graphics_resource_set_map_flags": (STATUS, [P, c_uint]),
    "cugl_graphics_resource_close": (STATUS, [P, P]),
    "cugl_graphics_resource_is_mapped": (c_bool, [P]),
    "cugl_graphics_resource_is_closed": (c_bool, [P]),
    "cugl_graphics_resource_is_buffer": (c_bool, [P]),
    "cugl_graphics_resource_flags": (c_uint, [P]),
    "cugl_graphics_resource_map_flags": (c_uint, [P]),
    "cugl_graphics_resource_gl_name": (c_uint32, [P]),
    "cugl_graphics_resource_gl_target": (c_uint32, [P]),
    "cugl_graphics_resource_handle": (P, [P]),
    "cugl_graphics_resource_device": (P, [P]),
    "cugl_graphics_resource_release": (None, [P]),
}


def _declare(cdll):
    missing = [name for name in PROTOTYPES if not hasattr(cdll, name)]
    if missing:
        raise OSError("it lacks " + ", ".join(missing) +
                      " (a libcugl older than this package?)")
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(cdll, name)
        fn.argtypes = argtypes
        fn.restype = c_int if restype == STATUS else restype
    last_error, last_cuda_result = cdll.cugl_last_error, cdll.cugl_last_cuda_result

    def raise_on_failure(result, func, args):
        if result == 0:
            return result
        # Read on the thread that failed, before any other cugl call.
        raise _errors.error_for(result, last_error().decode("utf-8", "replace"),
                                last_cuda_result())

    for name, (restype, _) in PROTOTYPES.items():
        if restype == STATUS:
            getattr(cdll, name).errcheck = raise_on_failure


def _installed_config():
    try:
        from . import _install_config
    except ImportError:
        return None
    return getattr(_install_config, "LIBRARY", None)


def _named_at_install():
    """The candidate between CUGL_LIBRARY and the installed library."""
    recorded = _installed_config()
    if recorded:
        yield ("the library named at install time", recorded,
               None if os.path.exists(recorded) else "%s does not exist" % recorded)
    else:
        yield ("the library named at install time", None,
               "none was named (set %s when running pip install)" % ENV)


# libcugl, and once loaded its CDLL (_Loaded.cdll) and path.
_Loaded = _loader.Library(
    ("libcugl.so", SONAME), ENV, (os.path.join("lib", "core"),), "cugl", _declare,
    more=_named_at_install,
    advice="Build cugl (meson setup build && ninja -C build) and set "
           "%s=<build>/lib/core/libcugl.so, or install it (meson install)." % ENV)

# libcugl in a directory, or in a Meson build directory's lib/core/ (setup.py's too).
_in_directory = _Loaded.in_directory


def load():
    """The loaded libcugl (a ctypes.CDLL with prototypes), loading it once."""
    return _Loaded.load()


def library_path():
    """The path of the libcugl this process uses (loading it if needed)."""
    load()
    return _Loaded.path


def live_objects():
    """cugl_live_objects(): the objects this process holds through libcugl."""
    return load().cugl_live_objects()


def live_bytes():
    """cugl_live_bytes(): the bytes this process holds from memory resources."""
    return load().cugl_live_bytes()


def status_name(status):
    """cugl_status_name(): the name of a status value."""
    return load().cugl_status_name(status).decode()


def last_error():
    """cugl_last_error() of the calling thread."""
    return load().cugl_last_error().decode("utf-8", "replace")
