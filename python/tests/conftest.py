"""What the cugl package's tests share: the device, PyTorch, and the skip rule.

A test that needs what this machine lacks (a CUDA driver or device,
PyTorch with CUDA) is skipped with the reason. With CUGL_TEST_NO_SKIP set
(the machines known to have a GPU), as for the C tests
(tests/common/cugl_test.h), every skip is a failure instead.
"""
import os

import pytest

import cugl

NO_SKIP = "CUGL_TEST_NO_SKIP" in os.environ


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if NO_SKIP and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = "would skip, but CUGL_TEST_NO_SKIP is set: %s" % (reason,)


def cuda_device_or_skip(ordinal=0):
    """Device `ordinal`, made current; skipped where there is no driver or
    no such device (only those: any other failure fails)."""
    try:
        count = cugl.device_count()
    except cugl.NoDriverError as e:
        pytest.skip(str(e))
    if count <= ordinal:
        pytest.skip("needs CUDA device %d; this machine has %d" % (ordinal, count))
    dev = cugl.Device(ordinal)
    dev.set_current()
    dev.memory_resource  # made once and kept: made here, it is no test's leak
    return dev


@pytest.fixture
def device():
    return cuda_device_or_skip(0)


@pytest.fixture
def stream(device):
    s = device.create_stream()
    yield s
    s.close()


@pytest.fixture
def torch(device):
    """PyTorch with CUDA, on device 0."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    torch.cuda.set_device(0)
    return torch


@pytest.fixture
def live():
    """Asserts that the test leaves cugl's live objects and bytes as it found them."""
    import gc
    gc.collect()
    before = (cugl.live_objects(), cugl.live_bytes())
    yield before
    gc.collect()
    assert (cugl.live_objects(), cugl.live_bytes()) == before
