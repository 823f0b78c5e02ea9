"""What the cugl package's tests share: the device, PyTorch, and the skip rule.

A test that needs what this machine lacks (a CUDA driver or device,
PyTorch with CUDA) is skipped with the reason. With CUGL_TEST_NO_SKIP set
(the machines known to have a GPU), as for the C tests
(tests/common/cugl_test.h), every skip is a failure instead, but for two
kinds a GPU machine may well lack, each run on its own terms:
- multi_gpu: needs two CUDA devices; python-gpu leaves these out and
  python-multi-gpu (the multi-gpu suite, as the C tests' two-GPU cases)
  runs them alone;
- optional_package: needs a package the project cannot install on every
  such machine: one that is no Debian package (NVIDIA Warp: pip only), or
  Debian's for Debian's Python alone (Jupyter's kernel and nbclient, which
  the test command installs, absent on a GPU machine whose Python is its
  own); its absence stays a skip, with the reason.
"""
import os
import sys
import threading
import time

import pytest

import cugl

NO_SKIP = "CUGL_TEST_NO_SKIP" in os.environ


def pytest_configure(config):
    config.addinivalue_line("markers", "multi_gpu: needs two CUDA devices (python-multi-gpu)")
    config.addinivalue_line("markers", "optional_package(name): needs a package the project "
                            "cannot install on every machine; its absence is a skip under "
                            "CUGL_TEST_NO_SKIP too")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (NO_SKIP and report.skipped and not hasattr(report, "wasxfail")
            and item.get_closest_marker("optional_package") is None):
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


@pytest.fixture
def runs_during():
    """runs_during(call) -> (seconds call() took, how many times another
    Python thread noted the time in the middle half of it).

    The other thread notes the time and sleeps half a millisecond, over and
    over. Python's switch interval is 1 s meanwhile, longer than the calls
    measured: a call that held the GIL would then leave that thread no
    moment to run until it returns, nor a forced switch right after it (a
    switch then could make the window look shared)."""
    def measure(call):
        stamps = []
        stop = threading.Event()

        def note():
            while not stop.is_set():
                stamps.append(time.perf_counter())
                time.sleep(0.0005)

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1.0)
        t = threading.Thread(target=note)
        t.start()
        try:
            time.sleep(0.01)  # the thread is running
            t0 = time.perf_counter()
            call()
            t1 = time.perf_counter()
        finally:
            stop.set()
            t.join()
            sys.setswitchinterval(interval)
        w = t1 - t0
        return w, sum(1 for s in stamps if t0 + 0.25 * w <= s <= t0 + 0.75 * w)
    return measure
