#!/usr/bin/env python3
"""Runs pytest for Meson: run_pytest.py [--prefer=MODULE] [--shard=K/N] PYTEST_ARGS...

The Python is the first that has pytest and NumPy of: CUGL_TEST_PYTHON,
the one running this script (Meson's own), `python3` on PATH and
/usr/bin/python3; with --prefer, the first of them that also has MODULE
(PyTorch for the GPU tests), where one does. The script then runs again
under it. With --shard=K/N only every Nth of the tests collected runs,
from the Kth on (1 <= K <= N): the shards of one suite run side by side as
tests of their own, and a parametrized test's cases spread over all.

Exit status: pytest's, except 77 (Meson's "skipped") when no Python has
pytest and NumPy, or when every test that ran was skipped (the reasons are
printed). With CUGL_TEST_NO_SKIP set, as for the C tests, a skip of any
kind is a failure (conftest.py turns skipped tests into failures).
"""
import os
import shutil
import subprocess
import tempfile
import sys

SKIP = 77
CHOSEN = "CUGL_TEST_PYTHON_CHOSEN"


def skip_all(why):
    if "CUGL_TEST_NO_SKIP" in os.environ:
        print("Bail out! would skip, but CUGL_TEST_NO_SKIP is set: %s" % why)
        sys.exit(1)
    print("1..0 # SKIP %s" % why)
    sys.exit(SKIP)


def has_modules(python, modules):
    try:
        out = subprocess.run([python, "-c", "import " + ", ".join(modules)],
                             capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0


def choose_python(prefer):
    candidates = []
    for python in (os.environ.get("CUGL_TEST_PYTHON"), sys.executable,
                   shutil.which("python3"), "/usr/bin/python3"):
        if python and os.path.exists(python) and python not in candidates:
            candidates.append(python)
    usable = [p for p in candidates if has_modules(p, ["pytest", "numpy"])]
    if not usable:
        skip_all("no Python here has pytest and NumPy (tried %s; Debian: apt-get install "
                 "python3-pytest python3-numpy)" % ", ".join(candidates))
    if prefer:
        for python in usable:
            if has_modules(python, [prefer]):
                return python
    return usable[0]


def parse_shard(spec):
    """--shard=K/N's (K, N), 1 <= K <= N."""
    k, _, n = spec.partition("/")
    if k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n):
        return int(k), int(n)
    raise SystemExit("run_pytest.py: --shard=%s: want K/N with 1 <= K <= N" % spec)


def run_pytest(args, shard=None):
    import pytest

    class Shard:
        """Keeps the Kth of every N tests collected, deselects the rest;
        last, so that what -m and -k leave is what is shared out."""

        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, config, items):
            k, n = shard
            keep = [item for i, item in enumerate(items) if i % n == k - 1]
            drop = [item for i, item in enumerate(items) if i % n != k - 1]
            if drop:
                config.hook.pytest_deselected(items=drop)
            items[:] = keep

    class Outcomes:
        def __init__(self):
            self.counts = {}

        def pytest_runtest_logreport(self, report):
            if report.when == "call" or report.outcome != "passed":
                self.counts[report.outcome] = self.counts.get(report.outcome, 0) + 1

    outcomes = Outcomes()
    print("python: %s %s" % (sys.executable, sys.version.split()[0]))
    # pytest's own temporary folders (tmp_path) in one of this run's, gone
    # after a run that passed; pytest would keep them in /tmp/pytest-of-USER.
    basetemp = tempfile.mkdtemp(prefix="cugl-pytest-")
    # --durations: the slowest tests in the log, to split a suite by (on
    # the GPU machine python-gpu-viewer was its command's longest test).
    status = pytest.main(["-v", "-rs", "--durations=12", "-p", "no:cacheprovider",
                          "--basetemp", basetemp]
                         # The shards must see one order (pytest-randomly
                         # would shuffle each its own way).
                         + (["-p", "no:randomly"] if shard else []) + args,
                         plugins=[outcomes] + ([Shard()] if shard else []))
    if status == 0:
        shutil.rmtree(basetemp, ignore_errors=True)
    else:
        print("pytest's temporary files: %s" % basetemp)
    counts = outcomes.counts
    print("pytest outcomes: %s" % (", ".join("%d %s" % (n, k) for k, n in sorted(
        counts.items())) or "none"))
    if status == 0 and counts.get("skipped") and not counts.get("passed"):
        return SKIP
    return int(status)


def main():
    args = sys.argv[1:]
    prefer = None
    if args and args[0].startswith("--prefer="):
        prefer = args.pop(0).split("=", 1)[1]
    shard = None
    if args and args[0].startswith("--shard="):
        shard = parse_shard(args[0].split("=", 1)[1])
        args.pop(0)
    if os.environ.get(CHOSEN) != sys.executable:
        python = choose_python(prefer)
        if python != sys.executable:
            os.environ[CHOSEN] = python
            os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])
    return run_pytest(args, shard)


if __name__ == "__main__":
    sys.exit(main())
