"""Memory resources and buffers: cuda.core's MemoryResource family and Buffer
over memory.h and buffer.h."""
import collections
import dataclasses
from ctypes import byref, c_void_p

from . import _dlpack as dl
from . import _interop
from ._device import Device
from ._handle import Owned
from ._lib import load
from ._stream import stream_ptr
from ._structs import DeviceMemoryDesc, ManagedMemoryDesc, PinnedMemoryDesc, PoolStats

# cugl_memory_kind (memory.h)
KINDS = {1: "device", 2: "pinned", 3: "managed", 4: "legacy_pinned", 5: "exportable",
         6: "registered"}

# cugl_location_kind (memory.h)
_LOCATIONS = {None: 0, "device": 1, "host": 2}

PoolStatistics = collections.namedtuple(
    "PoolStatistics", ["reserved_current", "reserved_high", "used_current", "used_high"])


@dataclasses.dataclass(frozen=True)
class DeviceMemoryResourceOptions:
    """A pool of the resource's own (cuda.core's names): max_size bounds its
    reserved memory (0: none); ipc_enabled shares it with other processes."""
    ipc_enabled: bool = False
    max_size: int = 0


@dataclasses.dataclass(frozen=True)
class PinnedMemoryResourceOptions:
    max_size: int = 0


@dataclasses.dataclass(frozen=True)
class ManagedMemoryResourceOptions:
    """preferred_location: None, "device" or "host"."""
    preferred_location: str = None


def _release_mr(ptr):
    load().cugl_memory_resource_release(ptr)


def _release_buffer(ptr):
    load().cugl_buffer_release(ptr)


class MemoryResource(Owned):
    """Where buffers come from. Base of the resources below."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("MemoryResource is abstract; use DeviceMemoryResource, "
                           "PinnedMemoryResource, ManagedMemoryResource, "
                           "LegacyPinnedMemoryResource or ExportableMemoryResource")

    @classmethod
    def _wrap(cls, ptr):
        """Take over one reference to a cugl_memory_resource."""
        mr = object.__new__(_KIND_CLASSES.get(load().cugl_memory_resource_kind(ptr), cls))
        mr._own(ptr, _release_mr)
        return mr

    def _init(self, create, device, *desc):
        device = Device(device)
        out = c_void_p()
        create(byref(out), device._ptr, *desc)
        self._own(out.value, _release_mr)

    def allocate(self, size, *, stream=None):
        """A Buffer of `size` bytes, ordered on `stream` (required where the
        resource is stream-ordered); it keeps `stream` to free itself on."""
        ptr, stream_obj = stream_ptr(stream)
        out = c_void_p()
        load().cugl_memory_resource_allocate(byref(out), self._ptr, size, ptr)
        return Buffer._wrap(out.value, mr=self, stream=stream_obj)

    def deallocate(self, ptr, size, *, stream=None):
        """Give back memory this resource allocated that no Buffer holds."""
        sptr, _ = stream_ptr(stream)
        load().cugl_memory_resource_deallocate(self._ptr, ptr, size, sptr)

    @property
    def kind(self):
        """'device', 'pinned', 'managed', 'legacy_pinned', 'exportable' or
        'registered' (a buffer's own, from cugl_buffer_register_host)."""
        return KINDS.get(load().cugl_memory_resource_kind(self._ptr))

    @property
    def is_device_accessible(self):
        return load().cugl_memory_resource_is_device_accessible(self._ptr)

    @property
    def is_host_accessible(self):
        return load().cugl_memory_resource_is_host_accessible(self._ptr)

    @property
    def is_managed(self):
        return load().cugl_memory_resource_is_managed(self._ptr)

    @property
    def is_ipc_enabled(self):
        return load().cugl_memory_resource_is_ipc_enabled(self._ptr)

    @property
    def is_stream_ordered(self):
        return load().cugl_memory_resource_is_stream_ordered(self._ptr)

    @property
    def device_id(self):
        """The device's ordinal; -1 for host memory of no device."""
        return load().cugl_memory_resource_device_id(self._ptr)

    @property
    def device(self):
        ptr = load().cugl_memory_resource_device(self._ptr)
        return Device._from_ptr(ptr) if ptr else None

    @property
    def handle(self):
        """The raw CUmemoryPool as an int; 0 without a pool."""
        return load().cugl_memory_resource_pool_handle(self._ptr) or 0

    @property
    def pool_stats(self):
        """Current and peak use of the pool (PoolStatistics, bytes)."""
        s = PoolStats()
        load().cugl_memory_resource_pool_stats(self._ptr, byref(s))
        return PoolStatistics(s.reserved_current, s.reserved_high, s.used_current, s.used_high)

    def trim(self, keep_bytes=0):
        """Give the pool's unused memory back, keeping `keep_bytes` reserved."""
        load().cugl_memory_resource_trim(self._ptr, keep_bytes)

    @property
    def is_closed(self):
        return load().cugl_memory_resource_is_closed(self._ptr)

    def close(self):
        """Refuse further allocations; buffers already made stay valid."""
        load().cugl_memory_resource_close(self._ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<%s device_id=%d%s>" % (type(self).__name__, self.device_id,
                                        " closed" if self.is_closed else "")


class DeviceMemoryResource(MemoryResource):
    """Stream-ordered device memory: the device's current pool, or with
    options a pool of its own."""

    def __init__(self, device=None, options=None):
        if options is None:
            desc = None
        elif isinstance(options, DeviceMemoryResourceOptions):
            desc = byref(DeviceMemoryDesc(own_pool=True, max_size=options.max_size,
                                          ipc=options.ipc_enabled))
        else:
            raise TypeError("options must be a DeviceMemoryResourceOptions, not %s"
                            % type(options).__name__)
        self._init(load().cugl_device_memory_resource_create, device, desc)


class PinnedMemoryResource(MemoryResource):
    """Page-locked host memory that `device` can reach."""

    def __init__(self, device=None, options=None):
        if options is not None and not isinstance(options, PinnedMemoryResourceOptions):
            raise TypeError("options must be a PinnedMemoryResourceOptions, not %s"
                            % type(options).__name__)
        desc = None if options is None else byref(PinnedMemoryDesc(max_size=options.max_size))
        self._init(load().cugl_pinned_memory_resource_create, device, desc)


class ManagedMemoryResource(MemoryResource):
    """Managed (unified) memory with a preferred location."""

    def __init__(self, device=None, options=None):
        if options is not None and not isinstance(options, ManagedMemoryResourceOptions):
            raise TypeError("options must be a ManagedMemoryResourceOptions, not %s"
                            % type(options).__name__)
        desc = None
        if options is not None:
            if options.preferred_location not in _LOCATIONS:
                raise ValueError("preferred_location must be None, 'device' or 'host', not %r"
                                 % (options.preferred_location,))
            desc = byref(ManagedMemoryDesc(_LOCATIONS[options.preferred_location]))
        self._init(load().cugl_managed_memory_resource_create, device, desc)


class LegacyPinnedMemoryResource(MemoryResource):
    """Synchronous pinned host memory (cuMemAllocHost); streams optional."""

    def __init__(self, device=None):
        self._init(load().cugl_legacy_pinned_memory_resource_create, device)


class ExportableMemoryResource(MemoryResource):
    """Device memory made with cuMemCreate, exportable as a file descriptor
    (what map-free GL interop imports)."""

    def __init__(self, device=None):
        self._init(load().cugl_exportable_memory_resource_create, device)


_KIND_CLASSES = {1: DeviceMemoryResource, 2: PinnedMemoryResource, 3: ManagedMemoryResource,
                 4: LegacyPinnedMemoryResource, 5: ExportableMemoryResource}


class Buffer(Owned):
    """Linear memory: a pointer, a size and who frees it (cuda.core's Buffer).

    From a memory resource's allocate(), Buffer.from_handle(), a mapped
    GraphicsResource, or a view's buffer. close() gives the memory back now
    (a mapped buffer unmaps); the Python object keeps its cugl reference
    until it is collected, so a closed buffer answers cugl's own "has been
    closed" errors. Buffers speak DLPack (a 1-D uint8 tensor).
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Buffer objects cannot be instantiated directly; use a memory "
                           "resource's allocate() or Buffer.from_handle()")

    @classmethod
    def _wrap(cls, ptr, mr=None, stream=None, owner=None):
        """Take over one reference to a cugl_buffer."""
        b = cls.__new__(cls)
        b._own(ptr, _release_buffer)
        b._mr = mr
        b._stream = stream  # the stream known to write it, for DLPack consumers
        b._owner = owner
        return b

    @staticmethod
    def from_handle(ptr, size, mr=None, owner=None):
        """A buffer over `size` bytes at `ptr` (an int, or an object that
        converts with int()).

        With `mr`, the buffer owns the memory and closing it gives it back
        to `mr`. With `owner`, nothing is freed, and `owner` is kept alive
        for as long as cugl uses the memory (this buffer, views of it, and
        what their DLPack exports reach). With neither, the caller keeps the
        memory valid. Device, accessibility and managed-ness of foreign
        memory are read from the driver (host memory without one).
        """
        if mr is not None and owner is not None:
            raise ValueError("owner and memory resource cannot be both specified together")
        if mr is not None and not isinstance(mr, MemoryResource):
            raise TypeError("mr must be a MemoryResource, not %s" % type(mr).__name__)
        lib = load()
        ptr = int(ptr)
        out = c_void_p()
        lib.cugl_buffer_from_handle(byref(out), ptr, size, mr._ptr if mr is not None else None)
        if owner is None:
            return Buffer._wrap(out.value, mr=mr)
        # A buffer that owns a tensor whose deleter drops `owner`: cugl then
        # keeps the owner for as long as any of its objects uses the memory.
        try:
            device = _interop.buffer_device(out.value)
        finally:
            lib.cugl_buffer_release(out.value)
        from ._tensor import import_owned
        view = import_owned(ptr, (size,), None, (dl.UINT, 8, 1), device, owner)
        buf = view.buffer
        buf._owner = owner
        return buf

    # --- what it is ---

    @property
    def handle(self):
        """The memory's address as an int; 0 after close."""
        return load().cugl_buffer_handle(self._ptr)

    def __int__(self):
        return self.handle

    @property
    def size(self):
        """Bytes; 0 after close."""
        return load().cugl_buffer_size(self._ptr)

    @property
    def device_id(self):
        """The device's ordinal; -1 for host memory."""
        return load().cugl_buffer_device_id(self._ptr)

    @property
    def memory_resource(self):
        """The resource that owns the memory; None for memory cugl does not
        own, and after close."""
        ptr = load().cugl_buffer_memory_resource(self._ptr)
        if not ptr:
            return None
        if self._mr is None:
            self._mr = MemoryResource._wrap(load().cugl_memory_resource_retain(ptr))
        return self._mr

    @property
    def owner(self):
        return self._owner

    @property
    def is_device_accessible(self):
        return load().cugl_buffer_is_device_accessible(self._ptr)

    @property
    def is_host_accessible(self):
        return load().cugl_buffer_is_host_accessible(self._ptr)

    @property
    def is_managed(self):
        return load().cugl_buffer_is_managed(self._ptr)

    @property
    def is_closed(self):
        return load().cugl_buffer_is_closed(self._ptr)

    # --- copies and fills ---

    def copy_to(self, dst=None, *, stream):
        """Copy into `dst` (same size) on `stream`; without `dst`, into a new
        buffer from this one's memory resource. Returns the destination."""
        sptr, stream_obj = stream_ptr(stream)
        if dst is not None and not isinstance(dst, Buffer):
            raise TypeError("dst must be a Buffer, not %s" % type(dst).__name__)
        out = c_void_p(dst._ptr if dst is not None else None)
        load().cugl_buffer_copy_to(byref(out), self._ptr, sptr)
        if dst is not None:
            return dst
        return Buffer._wrap(out.value, mr=self._mr, stream=stream_obj)

    def copy_from(self, src, *, stream):
        """Copy `src` (same size) into this buffer on `stream`."""
        if not isinstance(src, Buffer):
            raise TypeError("src must be a Buffer, not %s" % type(src).__name__)
        sptr, _ = stream_ptr(stream)
        load().cugl_buffer_copy_from(self._ptr, src._ptr, sptr)

    def fill(self, value, *, stream):
        """Fill with a pattern, on `stream`: an int is one byte (0 to 255); a
        bytes-like value of 1, 2 or 4 bytes is repeated."""
        if isinstance(value, int):
            value = value.to_bytes(1, "little")
        pattern = bytes(memoryview(value).cast("B"))
        sptr, _ = stream_ptr(stream)
        load().cugl_buffer_fill(self._ptr, pattern, len(pattern), sptr)

    def set_deallocation_stream(self, stream):
        """The stream close() frees on when given none."""
        sptr, _ = stream_ptr(stream)
        load().cugl_buffer_set_deallocation_stream(self._ptr, sptr)

    # --- lifetime ---

    def close(self, stream=None):
        """Give the memory back now, ordered on `stream` (None: the
        deallocation stream); idempotent. A mapped buffer unmaps."""
        sptr, _ = stream_ptr(stream)
        load().cugl_buffer_close(self._ptr, sptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- DLPack ---

    def __dlpack_device__(self):
        return _interop.buffer_device(self._ptr)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The buffer as a 1-D uint8 DLPack tensor, without a copy: DLPack
        1.x when max_version allows, else 0.x. A consumer's `stream` waits
        for the stream the buffer was allocated on (or imported with)."""
        device = self.__dlpack_device__()
        versioned = _interop.negotiate(max_version, dl_device, copy, device)
        _interop.order_consumer(self._stream, stream, device)
        return _interop.export_buffer(self._ptr, self.size, versioned)

    def __repr__(self):
        return "<Buffer handle=0x%x size=%d device_id=%d%s>" % (
            self.handle, self.size, self.device_id, " closed" if self.is_closed else "")
