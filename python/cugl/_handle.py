"""One reference to a cugl object, dropped exactly once.

Each Python object that wraps a cugl handle owns one reference to it. The
reference is dropped by a weakref finalizer: when the object is collected,
when the interpreter exits (finalizers still pending then run while Python
is whole), or earlier where a class releases it explicitly. A finalizer
runs at most once, so no path can drop the reference twice. Finalizers run
with any pending exception kept aside, so after the release the DLPack
bookkeeping is swept there (_dlpack.sweep).
"""
import weakref

from . import _dlpack


def _release_then_sweep(release, ptr):
    release(ptr)
    _dlpack.sweep()


class Owned:
    """Base of the wrappers: `_ptr` is the handle, `_finalizer` drops it."""

    _ptr = None
    _finalizer = None

    def _own(self, ptr, release):
        self._ptr = ptr
        self._finalizer = (weakref.finalize(self, _release_then_sweep, release, ptr)
                           if release else None)

    def _drop(self):
        """Drop the reference now (idempotent); the handle is forgotten."""
        if self._finalizer is not None:
            self._finalizer()
        self._ptr = None
