"""The C structs of libcugl's public headers, as ctypes structures.

Each mirrors one typedef of lib/core/include/cugl/*.h field for field; the
python suite compiles a probe against the headers and compares every size
and offset (tests/test_abi.py), so a header change that is not made here
fails a test instead of corrupting memory.
"""
import ctypes
from ctypes import (c_bool, c_char, c_int, c_int64, c_size_t, c_uint8, c_uint16, c_uint64,
                    c_void_p)

LAYOUT_MAX_NDIM = 64  # CUGL_LAYOUT_MAX_NDIM


class DeviceProperties(ctypes.Structure):
    """cugl_device_properties (device.h)."""
    _fields_ = [
        ("name", c_char * 256),
        ("uuid", c_uint8 * 16),
        ("pci_bus_id", c_char * 32),
        ("compute_capability_major", c_int),
        ("compute_capability_minor", c_int),
        ("total_memory", c_size_t),
        ("multiprocessor_count", c_int),
        ("warp_size", c_int),
        ("max_threads_per_block", c_int),
        ("max_block_dim", c_int * 3),
        ("max_grid_dim", c_int * 3),
        ("max_shared_memory_per_block", c_size_t),
        ("max_shared_memory_per_block_optin", c_size_t),
        ("clock_rate_khz", c_int),
        ("memory_clock_rate_khz", c_int),
        ("memory_bus_width_bits", c_int),
        ("l2_cache_bytes", c_int),
        ("max_texture_1d_width", c_int),
        ("max_texture_2d", c_int * 2),
        ("max_texture_2d_linear", c_int * 3),
        ("max_texture_3d", c_int * 3),
        ("max_texture_2d_layered", c_int * 3),
        ("max_texture_cubemap_width", c_int),
        ("max_surface_1d_width", c_int),
        ("max_surface_2d", c_int * 2),
        ("max_surface_3d", c_int * 3),
        ("texture_alignment", c_size_t),
        ("texture_pitch_alignment", c_size_t),
        ("stream_priority_least", c_int),
        ("stream_priority_greatest", c_int),
        ("integrated", c_bool),
        ("can_map_host_memory", c_bool),
        ("unified_addressing", c_bool),
        ("managed_memory", c_bool),
        ("concurrent_managed_access", c_bool),
        ("pageable_memory_access", c_bool),
        ("memory_pools_supported", c_bool),
        ("cooperative_launch", c_bool),
        ("cluster_launch", c_bool),
        ("ipc_event_supported", c_bool),
        ("virtual_memory_management_supported", c_bool),
        ("handle_type_posix_fd_supported", c_bool),
        ("memory_pool_posix_fd_supported", c_bool),
    ]


class StreamDesc(ctypes.Structure):
    """cugl_stream_desc (stream.h)."""
    _fields_ = [("blocking", c_bool), ("priority", c_int)]


class EventDesc(ctypes.Structure):
    """cugl_event_desc (event.h)."""
    _fields_ = [("timing", c_bool), ("blocking_sync", c_bool), ("ipc", c_bool)]


class DeviceMemoryDesc(ctypes.Structure):
    """cugl_device_memory_desc (memory.h)."""
    _fields_ = [("own_pool", c_bool), ("max_size", c_size_t), ("ipc", c_bool)]


class PinnedMemoryDesc(ctypes.Structure):
    """cugl_pinned_memory_desc (memory.h)."""
    _fields_ = [("max_size", c_size_t)]


class ManagedMemoryDesc(ctypes.Structure):
    """cugl_managed_memory_desc (memory.h)."""
    _fields_ = [("preferred_location", c_int)]


class PoolStats(ctypes.Structure):
    """cugl_pool_stats (memory.h)."""
    _fields_ = [("reserved_current", c_uint64), ("reserved_high", c_uint64),
                ("used_current", c_uint64), ("used_high", c_uint64)]


class ArrayDesc(ctypes.Structure):
    """cugl_array_desc (array.h)."""
    _fields_ = [
        ("ndim", c_int),
        ("shape", c_size_t * 3),
        ("format", c_int),
        ("num_channels", c_int),
        ("surface_load_store", c_bool),
        ("layers", c_size_t),
        ("cubemap", c_bool),
    ]


class DType(ctypes.Structure):
    """cugl_dtype (view.h): passed and returned by value."""
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class Layout(ctypes.Structure):
    """cugl_layout (layout.h)."""
    _fields_ = [
        ("ndim", c_int),
        ("shape", c_int64 * LAYOUT_MAX_NDIM),
        ("strides", c_int64 * LAYOUT_MAX_NDIM),
        ("itemsize", c_int64),
        ("slice_offset", c_int64),
    ]


class Slice(ctypes.Structure):
    """cugl_slice (layout.h)."""
    _fields_ = [
        ("is_index", c_bool),
        ("index", c_int64),
        ("has_start", c_bool),
        ("has_stop", c_bool),
        ("start", c_int64),
        ("stop", c_int64),
        ("step", c_int64),
    ]


class DLPackImportDesc(ctypes.Structure):
    """cugl_dlpack_import_desc (view.h)."""
    _fields_ = [("consumer_stream", c_void_p), ("producer_stream", c_void_p),
                ("no_sync", c_bool), ("readonly", c_bool)]


class ViewCopyDesc(ctypes.Structure):
    """cugl_view_copy_desc (view.h)."""
    _fields_ = [("allocator", c_void_p), ("blocking", c_int)]


# Every struct above by its C name, for the layout probe's comparison.
BY_C_NAME = {
    "cugl_device_properties": DeviceProperties,
    "cugl_stream_desc": StreamDesc,
    "cugl_event_desc": EventDesc,
    "cugl_device_memory_desc": DeviceMemoryDesc,
    "cugl_pinned_memory_desc": PinnedMemoryDesc,
    "cugl_managed_memory_desc": ManagedMemoryDesc,
    "cugl_pool_stats": PoolStats,
    "cugl_array_desc": ArrayDesc,
    "cugl_dtype": DType,
    "cugl_layout": Layout,
    "cugl_slice": Slice,
    "cugl_dlpack_import_desc": DLPackImportDesc,
    "cugl_view_copy_desc": ViewCopyDesc,
}
