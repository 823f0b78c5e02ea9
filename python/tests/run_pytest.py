#!/usr/bin/env python3
"""Runs pytest for Meson: run_pytest.py PYTEST_ARGS...

Exit status: pytest's, except 77 (Meson's "skipped") when pytest or NumPy
is missing, or when every test that ran was skipped (the reasons are
printed). With CUGL_TEST_NO_SKIP set, as for the C tests, a skip of any
kind is a failure (conftest.py turns skipped tests into failures).
"""
import os
import sys

SKIP = 77


def skip_all(why):
    if "CUGL_TEST_NO_SKIP" in os.environ:
        print("Bail out! would skip, but CUGL_TEST_NO_SKIP is set: %s" % why)
        sys.exit(1)
    print("1..0 # SKIP %s" % why)
    sys.exit(SKIP)


def main():
    for module, package in (("pytest", "python3-pytest"), ("numpy", "python3-numpy")):
        try:
            __import__(module)
        except ImportError as e:
            skip_all("%s is not installed (%s; Debian: apt-get install %s)"
                     % (module, e, package))
    import pytest

    class Outcomes:
        def __init__(self):
            self.counts = {}

        def pytest_runtest_logreport(self, report):
            if report.when == "call" or report.outcome != "passed":
                self.counts[report.outcome] = self.counts.get(report.outcome, 0) + 1

    outcomes = Outcomes()
    status = pytest.main(["-v", "-rs", "-p", "no:cacheprovider"] + sys.argv[1:],
                         plugins=[outcomes])
    counts = outcomes.counts
    print("pytest outcomes: %s" % (", ".join("%d %s" % (n, k) for k, n in sorted(
        counts.items())) or "none"))
    if status == 0 and counts.get("skipped") and not counts.get("passed"):
        return SKIP
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
