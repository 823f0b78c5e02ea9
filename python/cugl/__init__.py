"""cugl: CUDA and OpenGL sharing memory without copies, from Python.

The core of cugl's C library (libcugl) with cuda.core's names: Device,
Stream, Event, memory resources and Buffer, CUDAArray, StridedMemoryView
and GraphicsResource; DLPack both ways (1.x and 0.x) and the CUDA array
interface. Every operation is a call into libcugl through ctypes; its
failures raise CuglError subclasses carrying libcugl's message.

    import cugl, numpy
    view = cugl.from_dlpack(numpy.arange(12.0).reshape(3, 4))
    view.T.shape                        # (4, 3), no copy
    numpy.from_dlpack(view[1:, ::2])    # the same memory, back in NumPy

The live part, over libcugl-app: Viewer shows images and point sets from
host or device memory in a window, headless or in a web browser, and
hands out the picture's own GL-visible memory to write in place (frame()).

    v = cugl.Viewer(1920, 1080, serve=8080)
    while not v.should_close:
        with v.frame() as img:                      # GL's memory, no copy
            torch.from_dlpack(img).random_(0, 256)  # leaving the block presents
"""
from ._array import CUDAArray
from ._device import ComputeCapability, Device, DeviceProperties, device_count, driver_version
from ._errors import (ClosedError, CUDAError, CuglError, GLError, InvalidArgumentError,
                      InvalidStateError, LibraryNotFoundError, NoDeviceError, NoDriverError,
                      NotReadyError, NotSupportedError, OutOfMemoryError)
from ._graphics import (GL_RENDERBUFFER, GL_TEXTURE_2D, GL_TEXTURE_2D_ARRAY, GL_TEXTURE_3D,
                        GL_TEXTURE_CUBE_MAP, GL_TEXTURE_RECTANGLE, GraphicsResource)
from ._lib import last_error, library_path, live_bytes, live_objects
from ._memory import (Buffer, DeviceMemoryResource, DeviceMemoryResourceOptions,
                      ExportableMemoryResource, LegacyPinnedMemoryResource,
                      ManagedMemoryResource, ManagedMemoryResourceOptions, MemoryResource,
                      PinnedMemoryResource, PinnedMemoryResourceOptions, PoolStatistics)
from ._notices import AppNotice
from ._stream import Event, EventOptions, Stream, StreamOptions
from ._version import __version__
from ._view import StridedMemoryView, from_dlpack
from ._viewer import Input, InputEvent, Viewer, app_library_path, colormap, colormap_table

__all__ = [
    "Buffer", "ClosedError", "ComputeCapability", "CUDAArray", "CUDAError", "CuglError",
    "Device", "DeviceMemoryResource", "DeviceMemoryResourceOptions", "DeviceProperties",
    "Event", "EventOptions", "ExportableMemoryResource", "GLError", "GL_RENDERBUFFER",
    "GL_TEXTURE_2D", "GL_TEXTURE_2D_ARRAY", "GL_TEXTURE_3D", "GL_TEXTURE_CUBE_MAP",
    "GL_TEXTURE_RECTANGLE", "GraphicsResource", "InvalidArgumentError", "InvalidStateError",
    "LegacyPinnedMemoryResource", "LibraryNotFoundError", "ManagedMemoryResource",
    "ManagedMemoryResourceOptions", "MemoryResource", "NoDeviceError", "NoDriverError",
    "NotReadyError", "NotSupportedError", "OutOfMemoryError", "PinnedMemoryResource",
    "PinnedMemoryResourceOptions", "PoolStatistics", "Stream", "StreamOptions",
    "StridedMemoryView", "__version__", "device_count", "driver_version", "from_dlpack",
    "last_error", "library_path", "live_bytes", "live_objects",
    # the live part, over libcugl-app
    "AppNotice", "Input", "InputEvent", "Viewer", "app_library_path", "colormap",
    "colormap_table",
]
