"""cugl's statuses as Python exceptions.

Every failed libcugl call raises the class of its cugl_status, carrying the
message libcugl left in cugl_last_error() (which names the C function and
the facts). The classes also derive from the built-in exception a Python
caller would expect (ValueError for a bad argument, MemoryError for out of
memory, RuntimeError for the rest), so `except ValueError` works too.
"""


class CuglError(Exception):
    """Base of every error this package raises for libcugl.

    Attributes:
        status: the cugl_status value (an int), or None where the error did
            not come from a libcugl call (the library could not be loaded).
        status_name: its name, e.g. "CUGL_ERROR_CLOSED".
        cuda_result: the CUresult the driver reported (0 where none did).
        message: the message, as cugl_last_error() gave it.
    """

    status = None
    status_name = None

    def __init__(self, message, cuda_result=0):
        super().__init__(message)
        self.message = message
        self.cuda_result = cuda_result


class InvalidArgumentError(CuglError, ValueError):
    """CUGL_ERROR_INVALID_ARGUMENT: an argument is NULL, zero or out of range."""


class ClosedError(CuglError, RuntimeError):
    """CUGL_ERROR_CLOSED: the object has been closed."""


class InvalidStateError(CuglError, RuntimeError):
    """CUGL_ERROR_INVALID_STATE: the call is not valid in the object's state."""


class NotSupportedError(CuglError, RuntimeError):
    """CUGL_ERROR_NOT_SUPPORTED: not supported by this driver or device."""


class OutOfMemoryError(CuglError, MemoryError):
    """CUGL_ERROR_OUT_OF_MEMORY: out of memory."""


class NoDriverError(CuglError, RuntimeError):
    """CUGL_ERROR_NO_DRIVER: no usable CUDA driver."""


class NoDeviceError(CuglError, RuntimeError):
    """CUGL_ERROR_NO_DEVICE: no CUDA device."""


class NotReadyError(CuglError, RuntimeError):
    """CUGL_ERROR_NOT_READY: the work has not completed yet."""


class CUDAError(CuglError, RuntimeError):
    """CUGL_ERROR_CUDA: the CUDA driver reported an error (see cuda_result)."""


class GLError(CuglError, RuntimeError):
    """CUGL_ERROR_GL: the OpenGL side reported an error."""


class LibraryNotFoundError(CuglError, OSError):
    """libcugl could not be found or loaded; the message lists what was tried."""


# cugl_status (error.h, CUGL_STATUS_LIST) by name and value, with its class.
# tests/test_errors.py checks this table against the loaded library's
# cugl_status_name() for every value, so the two cannot drift apart.
STATUSES = (
    ("CUGL_ERROR_INVALID_ARGUMENT", 1, InvalidArgumentError),
    ("CUGL_ERROR_CLOSED", 2, ClosedError),
    ("CUGL_ERROR_INVALID_STATE", 3, InvalidStateError),
    ("CUGL_ERROR_NOT_SUPPORTED", 4, NotSupportedError),
    ("CUGL_ERROR_OUT_OF_MEMORY", 5, OutOfMemoryError),
    ("CUGL_ERROR_NO_DRIVER", 6, NoDriverError),
    ("CUGL_ERROR_NO_DEVICE", 7, NoDeviceError),
    ("CUGL_ERROR_NOT_READY", 8, NotReadyError),
    ("CUGL_ERROR_CUDA", 9, CUDAError),
    ("CUGL_ERROR_GL", 10, GLError),
)

for _name, _value, _cls in STATUSES:
    _cls.status = _value
    _cls.status_name = _name

CLASS_BY_STATUS = {value: cls for _, value, cls in STATUSES}


def error_for(status, message, cuda_result=0):
    """The exception for a failed call's status and message."""
    cls = CLASS_BY_STATUS.get(status)
    if cls is None:
        err = CuglError(message, cuda_result)
        err.status = status
        return err
    return cls(message, cuda_result)
