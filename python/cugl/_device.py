"""Devices: cuda.core's Device over cugl_device (device.h)."""
import collections
import ctypes
import threading
import uuid as _uuid
from ctypes import byref, c_bool, c_int, c_size_t, c_void_p

from . import _errors
from ._lib import load
from ._structs import DeviceProperties as _CProperties

ComputeCapability = collections.namedtuple("ComputeCapability", ["major", "minor"])


class DeviceProperties:
    """What cugl_device_get_properties reports, as attributes (read-only):
    arrays become tuples, names strings, the UUID bytes."""

    def __init__(self, c_props):
        for name, ctype in _CProperties._fields_:
            value = getattr(c_props, name)
            if name == "uuid":
                value = bytes(value)
            elif isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            elif isinstance(value, ctypes.Array):
                value = tuple(value)
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError("DeviceProperties are read-only")

    def __repr__(self):
        return "DeviceProperties(%s)" % ", ".join(
            "%s=%r" % (name, getattr(self, name)) for name, _ in _CProperties._fields_)


def device_count():
    """The number of CUDA devices (0 where the driver sees none).

    Raises NoDriverError without a usable driver.
    """
    n = c_int()
    load().cugl_device_count(byref(n))
    return n.value


def driver_version():
    """The CUDA driver's version, e.g. 13000 for CUDA 13.0."""
    v = c_int()
    load().cugl_driver_version(byref(v))
    return v.value


class Device:
    """A CUDA device and its primary context. One object per device (devices
    are process-wide in cugl, never released).

    Device(device_id=None): the device with that ordinal; with none, the
    device current on this thread (made current with set_current()), else
    device 0. As in cuda.core, call set_current() once before creating
    streams, events, memory or arrays on it.
    """

    _by_ordinal = {}
    _lock = threading.Lock()

    def __new__(cls, device_id=None):
        lib = load()
        out = c_void_p()
        if device_id is None:
            try:
                lib.cugl_device_get_current(byref(out))
            except _errors.InvalidStateError:
                out = c_void_p()
            if not out.value:
                lib.cugl_device_get(byref(out), 0)
        elif isinstance(device_id, Device):
            return device_id
        else:
            if isinstance(device_id, bool) or not isinstance(device_id, int):
                raise TypeError("device_id must be an int, not %s" % type(device_id).__name__)
            lib.cugl_device_get(byref(out), device_id)
        return cls._from_ptr(out.value)

    @classmethod
    def _from_ptr(cls, ptr):
        ordinal = load().cugl_device_ordinal(ptr)
        with cls._lock:
            dev = cls._by_ordinal.get(ordinal)
            if dev is None:
                dev = object.__new__(cls)
                dev._ptr = ptr
                dev._id = ordinal
                dev._props = None
                dev._mr = None
                cls._by_ordinal[ordinal] = dev
        return dev

    @staticmethod
    def get_all_devices():
        """Every CUDA device, in ordinal order."""
        return [Device(i) for i in range(device_count())]

    # --- identity and properties ---

    @property
    def device_id(self):
        """The CUDA ordinal."""
        return self._id

    @property
    def handle(self):
        """The raw CUdevice (an int)."""
        return load().cugl_device_handle(self._ptr)

    @property
    def context_handle(self):
        """The raw CUcontext of the primary context (an int); 0 before set_current()."""
        return load().cugl_device_context_handle(self._ptr) or 0

    @property
    def properties(self):
        """The device's properties (DeviceProperties), read once and cached."""
        if self._props is None:
            c_props = _CProperties()
            load().cugl_device_get_properties(self._ptr, byref(c_props))
            self._props = DeviceProperties(c_props)
        return self._props

    @property
    def name(self):
        return self.properties.name

    @property
    def uuid(self):
        """The device's UUID as a string (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)."""
        return str(_uuid.UUID(bytes=self.properties.uuid))

    @property
    def pci_bus_id(self):
        return self.properties.pci_bus_id

    @property
    def compute_capability(self):
        """(major, minor), a namedtuple."""
        p = self.properties
        return ComputeCapability(p.compute_capability_major, p.compute_capability_minor)

    @property
    def arch(self):
        """The compute capability as nvcc's architecture number, e.g. '90'."""
        return "%d%d" % tuple(self.compute_capability)

    # --- the primary context ---

    def set_current(self):
        """Retain the primary context (once) and make it current on this thread."""
        load().cugl_device_set_current(self._ptr)

    @property
    def is_initialized(self):
        """Whether set_current() has been called for the device."""
        return load().cugl_device_is_initialized(self._ptr)

    def sync(self):
        """Wait until all work on the device has completed."""
        load().cugl_device_sync(self._ptr)

    def memory_info(self):
        """(free, total) device memory in bytes, as the driver sees them now."""
        free, total = c_size_t(), c_size_t()
        load().cugl_device_memory_info(self._ptr, byref(free), byref(total))
        return free.value, total.value

    def can_access_peer(self, peer):
        """Whether this device can use `peer`'s memory directly."""
        out = c_bool()
        load().cugl_device_can_access_peer(byref(out), self._ptr, Device(peer)._ptr)
        return out.value

    def enable_peer_access(self, peer):
        """Let work on this device use `peer`'s memory by pointer."""
        load().cugl_device_enable_peer_access(self._ptr, Device(peer)._ptr)

    # --- what is made on it ---

    @property
    def default_stream(self):
        """The device's legacy default stream."""
        from ._stream import Stream
        out = c_void_p()
        load().cugl_device_default_stream(byref(out), self._ptr)
        return Stream._wrap(out.value, owned=False)

    def create_stream(self, obj=None, options=None):
        """A new stream (StreamOptions), or a wrapper of `obj`'s stream
        (an object with __cuda_stream__)."""
        from ._stream import Stream
        if obj is not None:
            if options is not None:
                raise ValueError("give a stream object or options, not both")
            return Stream.from_handle(obj)
        return Stream._create(self, options)

    def create_event(self, options=None):
        """A new event (EventOptions)."""
        from ._stream import Event
        return Event._create(self, options)

    @property
    def memory_resource(self):
        """The device's default memory resource: its current memory pool."""
        if self._mr is None:
            from ._memory import DeviceMemoryResource
            self._mr = DeviceMemoryResource(self)
        return self._mr

    def allocate(self, size, stream=None):
        """`size` bytes of device memory from memory_resource, ordered on
        `stream` (None: the default stream)."""
        return self.memory_resource.allocate(
            size, stream=self.default_stream if stream is None else stream)

    def __repr__(self):
        return "<Device %d>" % self._id

    def __reduce__(self):
        return (Device, (self._id,))
