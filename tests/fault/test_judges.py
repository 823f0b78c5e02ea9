#!/usr/bin/env python3
"""How run_faults.py judges a run's output, without a GPU: a leak report
with no frame of cugl's, after a release the driver was made to fail, is
what the driver kept; any frame of cugl's, the tests' or the demos', any
other sanitizer report, or a failed call that releases nothing, stays a
failure.

usage: test_judges.py RUN_FAULTS_PY
"""
import importlib.util
import sys
import unittest

spec = importlib.util.spec_from_file_location('run_faults', sys.argv.pop(1))
run_faults = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_faults)

# What LeakSanitizer printed when the driver's cuGraphicsUnregisterResource
# was failed: a block of the driver's, allocated from code it maps without
# a file.
DRIVERS = """round 1: whole (failed: cuGraphicsUnregisterResource)
failed in a release: cuGraphicsUnregisterResource

=================================================================
==9351==ERROR: LeakSanitizer: detected memory leaks

Direct leak of 48 byte(s) in 1 object(s) allocated from:
    #0 0x7f8ab32fd9c7 in malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69
    #1 0x7f88a11d0ac4  (<unknown module>)

SUMMARY: AddressSanitizer: 48 byte(s) leaked in 1 allocation(s).
"""

# A block of cugl's (the scenario's kernel, before it was released).
CUGLS = DRIVERS.replace(
    "    #1 0x7f88a11d0ac4  (<unknown module>)\n",
    "    #1 0x7f34e2cb637b in cugl_module_get_kernel ../lib/core/module.c:131\n"
    "    #2 0x55b015b4b659 in run_round ../tests/fault/fault_scenario.c:232\n"
    "    #3 0x7f34e202a28a in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x2a28a)\n")

UNREGISTER = ('cuGraphicsUnregisterResource', 219, 'libcugl.so.0+0x9ad7f')
ALLOC = ('cuMemAlloc_v2', 12, 'libcugl.so.0+0x1234')


def sweep():
    s = run_faults.Sweep.__new__(run_faults.Sweep)
    s.release_kept = []
    return s


class DriversLeak(unittest.TestCase):
    def test_the_drivers_block_alone(self):
        self.assertEqual(run_faults.drivers_leak(DRIVERS), '48 byte(s) leaked in 1 allocation(s).')

    def test_a_frame_of_cugls(self):
        self.assertIsNone(run_faults.drivers_leak(CUGLS))

    def test_a_source_path_of_the_demos(self):
        out = DRIVERS.replace('(<unknown module>)', 'in frame ../demos/common/demo.c:12')
        self.assertIsNone(run_faults.drivers_leak(out))

    def test_the_shim_is_ours(self):
        out = DRIVERS.replace('(<unknown module>)', '(libcuda_fault.so+0x1f00)')
        self.assertIsNone(run_faults.drivers_leak(out))

    def test_another_sanitizer_report(self):
        out = DRIVERS + '==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x1\n'
        self.assertIsNone(run_faults.drivers_leak(out))
        out = DRIVERS + '../lib/core/x.c:3:5: runtime error: signed integer overflow\n'
        self.assertIsNone(run_faults.drivers_leak(out))

    def test_no_leak_report(self):
        self.assertIsNone(run_faults.drivers_leak('round 1: whole (failed: nothing)\n'))


class JudgeScenario(unittest.TestCase):
    def test_a_failed_release_keeps_the_drivers_block(self):
        s = sweep()
        self.assertIsNone(s.judge_scenario(-6, DRIVERS, UNREGISTER))
        self.assertEqual(s.release_kept, ["a release's cuGraphicsUnregisterResource failed: "
                                          "the driver kept 48 byte(s) leaked in 1 allocation(s)."])

    def test_not_in_a_release(self):
        s = sweep()
        out = DRIVERS.replace('failed in a release: cuGraphicsUnregisterResource\n', '')
        self.assertIn('crash or exit -6', s.judge_scenario(-6, out, UNREGISTER))
        self.assertEqual(s.release_kept, [])

    def test_cugls_block(self):
        self.assertIn('crash or exit -6', sweep().judge_scenario(-6, CUGLS, UNREGISTER))

    def test_a_defect_besides(self):
        out = 'DEFECT: round 2 did not carry on after the failure\n' + DRIVERS
        self.assertIn('DEFECT: round 2', sweep().judge_scenario(1, out, UNREGISTER))

    def test_clean(self):
        self.assertIsNone(sweep().judge_scenario(0, 'round 1: whole\n', UNREGISTER))


class JudgeDemo(unittest.TestCase):
    def test_a_failed_release_keeps_the_drivers_block(self):
        s = sweep()
        self.assertIsNone(s.judge_demo(-6, DRIVERS, UNREGISTER))
        self.assertEqual(len(s.release_kept), 1)

    def test_a_call_that_releases_nothing(self):
        wrong = sweep().judge_demo(-6, DRIVERS, ALLOC)
        self.assertIn('crashed (exit -6)', wrong)
        self.assertIn('SUMMARY: AddressSanitizer: 48 byte(s)', wrong)

    def test_cugls_block(self):
        self.assertIn('crashed', sweep().judge_demo(-6, CUGLS, UNREGISTER))

    def test_a_stop_that_names_the_call(self):
        out = 'sinewave: cugl_buffer_create: cuMemAlloc_v2 failed: out of memory\n'
        self.assertIsNone(sweep().judge_demo(1, out, ALLOC))

    def test_a_stop_that_does_not(self):
        self.assertIn('without naming', sweep().judge_demo(1, 'sinewave: failed\n', ALLOC))


class Unreached(unittest.TestCase):
    def test_sites_no_run_reached(self):
        static = [('lib/core/graphics.c', 735, 'cuGraphicsUnregisterResource'),
                  ('lib/core/memory.c', 88, 'cuMemPoolDestroy'),
                  ('lib/core/peer.c', 40, 'cuCtxEnablePeerAccess')]
        reached = {'graphics.c:735', 'memory.c:88', 'libcugl.so.0+0x99'}
        self.assertEqual(run_faults.unreached(static, reached),
                         ['peer.c:40:cuCtxEnablePeerAccess'])
        self.assertEqual(run_faults.unreached(static, set()),
                         ['graphics.c:735:cuGraphicsUnregisterResource',
                          'memory.c:88:cuMemPoolDestroy', 'peer.c:40:cuCtxEnablePeerAccess'])


class JudgeTest(unittest.TestCase):
    def test_a_tests_own_leak_after_a_failed_check(self):
        self.assertIsNone(sweep().judge_test(1, CUGLS, ALLOC))

    def test_a_crash(self):
        out = '==1==ERROR: AddressSanitizer: SEGV on unknown address 0x0\n'
        self.assertIn('crashed', sweep().judge_test(-11, out, ALLOC))


class ChooseRunsTest(unittest.TestCase):
    # Two tests (one cheap, one dear) and a demo, reaching sites a to d.
    PROGRAMS = [(False, 900, ['a', 'b', 'c']), (False, 100, ['b', 'c', 'd']),
                (True, 50, ['a', 'd'])]

    def test_each_site_once_in_the_cheapest_of_each_kind(self):
        runs, chosen = run_faults.choose_runs(self.PROGRAMS, 1, 0, 1)
        self.assertEqual(runs, sorted(chosen, key=lambda r: (r[1], r[0])))
        self.assertEqual(chosen, {('a', 0), ('b', 1), ('c', 1), ('d', 1), ('a', 2), ('d', 2)})

    def test_a_sample_is_the_same_for_the_same_seed(self):
        first, chosen = run_faults.choose_runs(self.PROGRAMS, 1, 2, 7)
        again, _ = run_faults.choose_runs(self.PROGRAMS, 1, 2, 7)
        self.assertEqual(first, again)
        drawn = set(first) - chosen
        self.assertEqual(len(drawn), 2)
        self.assertTrue(drawn <= {('b', 0), ('c', 0)})
        seeds = {tuple(run_faults.choose_runs(self.PROGRAMS, 1, 1, seed)[0]) for seed in range(8)}
        self.assertEqual(len(seeds), 2)  # other seeds, other runs

    def test_a_sample_larger_than_the_rest_takes_all(self):
        runs, _ = run_faults.choose_runs(self.PROGRAMS, 1, 99, 1)
        self.assertEqual(len(runs), 8)


if __name__ == '__main__':
    unittest.main()
