#!/usr/bin/env python3
"""Driver fault injection, in two sweeps.

The scenario sweep: fault_scenario runs under the fault shim once with
nothing failed (to count the driver calls of a round), then once per call
with that call failed (CUGL_FAULT_CALL=1, 2, ...), for each RESULT, and the
driver's loading with each of its first calls failed. A run passes when the
scenario exits 0: no crash, every failure named, round 2 whole, fds and
pool memory back (see fault_scenario.c).

The site sweep, over the programs named by --test (the gpu suite's
programs) and --demo (the demos' first frames, on each interop path): each
runs once with nothing failed (all of them at once), which lists the
driver call sites in libcugl it reaches (the shim's log), then once per
call site with the first call from that site failed (CUGL_FAULT_SITE).
Each site is failed in --per-site tests and --per-site demo runs: those
that reach it with the fewest driver calls (the cheapest runs; the same
choice every time for the same programs). Then --sample more runs, drawn
from the other (site, program) pairs with the seed --seed (default
CUGL_FAULT_SEED, else 1): a run of the same seed fails the same sites in
the same programs, and another seed other ones. Such a
run passes when it does not crash (no signal, no sanitizer report, no
exception caught by the test framework) and does not hang; a test may fail
its checks, since its call failed. A demo that exits non-zero must say
which driver call failed; one that exits 0 carried on past it (a fallback).

Prints the runs, the driver functions and call sites failed at least once,
the call sites reached, the call sites in lib/ for comparison and those of
them no run reached; exits 1
when a run crashed or found a defect, 77 (skip) without a GPU.

Each part prints its progress as it goes (a line every few seconds): a
part that runs long shows where it is.

usage: run_faults.py SCENARIO SHIM LIBCUGL SOURCE_DIR [RESULT ...]
         [--test EXE ...] [--demo EXE ...] [--per-site K] [--sample N] [--seed S]
         [--jobs N] [--no-scenario]
  RESULT: CUGL_FAULT_RESULT values for the scenario sweep (default: oom
  unknown); the site sweep uses the first.
"""
import argparse
import concurrent.futures
import glob
import itertools
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

# What a crash or a sanitizer's finding leaves in a program's output.
CRASH_MARKS = ('ERROR: AddressSanitizer', 'ERROR: LeakSanitizer', 'runtime error:',
               'Test failed with exception', 'ThreadSanitizer')

DEMO_PATHS = ('map', 'shared', 'host')

# Driver calls that release: what one of them failed to release stays the
# driver's.
RELEASES = re.compile(r'Destroy|Unregister|Release|Free|Unload|Unmap')


def say(text):
    """A line of progress, out at once (meson keeps the test's output)."""
    print(text, flush=True)


def run(cmd, env, timeout=120):
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                           errors='replace')
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 'timeout', 'timed out after %d s' % timeout


def add_options(env, var, **options):
    """Append name=value options to a sanitizer's colon-separated option
    variable in env, each unless the variable names it already."""
    have = [o for o in env.get(var, '').split(':') if o]
    names = {o.partition('=')[0] for o in have}
    have += ['%s=%s' % (k, v) for k, v in options.items() if k not in names]
    env[var] = ':'.join(have)


def read_logs(pattern):
    """The shim's logs of one run (one per process): calls, the failed call
    (name, number, caller) of the first process that failed one, and the
    sites seen {caller: (name, calls)}."""
    calls, failed, sites = 0, None, {}
    for path in sorted(glob.glob(pattern)):
        for line in open(path):
            w = line.split()
            if not w:
                continue
            if w[0] == 'calls':
                calls += int(w[1])
            elif w[0] == 'failed' and not failed:
                failed = (w[1], int(w[2]), w[3])
            elif w[0] == 'site':
                name, n = sites.get(w[1], (w[2], 0))
                sites[w[1]] = (name, n + int(w[3]))
        os.unlink(path)
    return calls, failed, sites


def source_sites(src):
    """Driver call sites in lib/: (file, line, function) of each call."""
    sites = []
    pat = re.compile(r'(?:cugl__cu\.|CUGL_CU\(\s*|CUGL_CU_AS\([^,()]*,\s*)(cu[A-Z]\w*)')
    for f in sorted(glob.glob(os.path.join(src, 'lib', '*', '*.c'))):
        for n, line in enumerate(open(f), 1):
            for m in pat.finditer(line):
                sites.append((os.path.relpath(f, src), n, m.group(1)))
    return sites


def unreached(static, reached):
    """The call sites of lib/ (source_sites) at none of the reached
    file:line places (Sweep.where), as file:line:function."""
    return ['%s:%d:%s' % (os.path.basename(f), n, fn) for f, n, fn in static
            if '%s:%d' % (os.path.basename(f), n) not in reached]


def drivers_leak(out):
    """Where LeakSanitizer's report is all there is to a failed run and no
    block of it has a frame in cugl, the tests or the demos (a registration
    the driver did not undo holds the driver's memory, from code it maps
    without a file): what it says it lost, else None."""
    lines = out.splitlines()
    if not any('ERROR: LeakSanitizer' in l for l in lines):
        return None
    if any(m in l for l in lines for m in CRASH_MARKS if 'LeakSanitizer' not in m):
        return None
    frames = [l for l in lines if re.match(r'\s*#\d+ 0x', l)]
    ours = re.compile(r'libcugl|libcuda_fault|fault_scenario| in cugl'
                      r'|\b(lib|tests|demos)/[\w/]+\.(c|cpp|h):\d')
    if any(ours.search(f) for f in frames):
        return None
    summary = [l for l in lines if 'SUMMARY: AddressSanitizer:' in l]
    return summary[0].split('SUMMARY: AddressSanitizer: ')[1] if summary else 'memory'


def choose_runs(programs, per_site, sample, seed):
    """The site sweep's runs, as (site, program index), and those of them
    chosen for the sites alone. programs: (is_demo, driver calls, sites)
    of each program's run with nothing failed. Each site is failed in the
    --per-site cheapest programs of each kind that reach it (fewest driver
    calls; ties in the order given), and `sample` more runs are drawn from
    the other (site, program) pairs with `seed`: the same runs for the same
    seed."""
    chosen = set()
    for is_demo in (False, True):
        by_site = {}
        for i, (kind, calls, sites) in enumerate(programs):
            if kind == is_demo:
                for site in sites:
                    by_site.setdefault(site, []).append((calls, i))
        for site, reaching in by_site.items():
            chosen |= {(site, i) for _, i in sorted(reaching)[:per_site]}
    rest = sorted({(site, i) for i, p in enumerate(programs) for site in p[2]} - chosen)
    drawn = random.Random(seed).sample(rest, min(sample, len(rest)))
    return sorted(chosen | set(drawn), key=lambda r: (r[1], r[0])), chosen


class Sweep:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix='cugl-fault-')
        self.base = dict(os.environ, CUGL_LIBCUDA=args.shim)
        # In a build with AddressSanitizer: the driver maps memory where
        # ASan's shadow gap would be, and its own leaks at exit are not ours.
        # Added to what is there (meson test sets ASAN_OPTIONS of its own),
        # where the caller did not say otherwise.
        add_options(self.base, 'ASAN_OPTIONS', protect_shadow_gap='0', detect_leaks='1')
        add_options(self.base, 'LSAN_OPTIONS', suppressions=os.path.join(
            os.path.dirname(os.path.abspath(__file__)), 'lsan.supp'))
        add_options(self.base, 'UBSAN_OPTIONS', print_stacktrace='1', halt_on_error='1')
        for k in ('CUGL_FAULT_CALL', 'CUGL_FAULT_FUNC', 'CUGL_FAULT_OCCURRENCE',
                  'CUGL_FAULT_RESULT', 'CUGL_FAULT_SITE', 'CUGL_FAULT_LOG'):
            self.base.pop(k, None)
        self.serial = itertools.count(1)  # next() is atomic: runs come from threads
        self.failures = []
        self.functions, self.sites, self.reached = set(), set(), set()
        self.runs = 0
        self.release_kept = []  # runs whose failed release kept something
        self.addr2line = shutil.which('addr2line')
        self.site_cache = {}
        self.started = self.last_said = time.monotonic()

    def once(self, cmd, extra, timeout=120):
        """Run cmd under the shim with `extra` in its environment: (exit
        status, output, calls, failed, sites)."""
        pattern = os.path.join(self.tmp, 'log%d.' % next(self.serial))
        env = dict(self.base, CUGL_FAULT_LOG=pattern + '%p', **extra)
        rc, out = run(cmd, env, timeout)
        calls, failed, sites = read_logs(pattern + '*')
        return rc, out, calls, failed, sites

    def where(self, caller):
        """file:line of a caller "libcugl.so.0.1.0+0x1234", where addr2line
        can tell."""
        if caller in self.site_cache:
            return self.site_cache[caller]
        name, _, off = caller.partition('+')
        loc = caller
        if self.addr2line and name.startswith('libcugl'):
            p = subprocess.run([self.addr2line, '-e', self.args.libcugl,
                                hex(int(off, 16) - 1)], capture_output=True, text=True)
            text = p.stdout.strip()
            if text and not text.startswith('??'):
                loc = os.path.basename(text.split(':')[0]) + ':' + text.split(':')[1].split()[0]
        self.site_cache[caller] = loc
        return loc

    def progress(self, done, total):
        """A line now and then: how far the part has got."""
        now = time.monotonic()
        if done == total or now - self.last_said >= 10:
            self.last_said = now
            say('  %d of %d runs, %.0f s' % (done, total, now - self.started))

    def note_failed(self, failed):
        if failed:
            self.functions.add(failed[0])
            self.sites.add(self.where(failed[2]))

    def parallel(self, jobs):
        """Run jobs [(cmd, extra, judge)] on --jobs workers; judge(rc, out,
        failed) gives None or what went wrong."""
        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            futures = [(pool.submit(self.once, cmd, extra), cmd, extra, judge)
                       for cmd, extra, judge in jobs]
            for done, (f, cmd, extra, judge) in enumerate(futures, 1):
                rc, out, _, failed, _ = f.result()
                self.progress(done, len(futures))
                self.runs += 1
                self.note_failed(failed)
                wrong = judge(rc, out, failed)
                if wrong:
                    what = ' '.join(os.path.basename(c) for c in cmd[:1]) + ' ' + \
                        ' '.join(cmd[1:]) + ' ' + \
                        ' '.join('%s=%s' % kv for kv in sorted(extra.items()))
                    self.failures.append('%s (failed: %s): %s' %
                                         (what, failed[0] if failed else 'nothing', wrong))

    # --- the scenario sweep -------------------------------------------------

    def scenario_round(self):
        """The scenario once with nothing failed: (exit status, output, calls,
        sites). Without a GPU, the sweep skips here (exit 77; 1 where
        CUGL_TEST_NO_SKIP=1): every part starts with it."""
        rc, out, calls, _, sites = self.once([self.args.scenario], {})
        if rc == 77:
            print('run_faults: skipped: ' + (out.strip().splitlines() or ['no GPU'])[-1])
            sys.exit(1 if os.environ.get('CUGL_TEST_NO_SKIP') == '1' else 77)
        return rc, out, calls, sites

    def scenario(self):
        a = self.args
        rc, out, calls, sites = self.scenario_round()
        if rc != 0 or calls == 0:
            print(out)
            print('run_faults: the scenario fails with nothing injected (exit %s, %d calls)'
                  % (rc, calls))
            sys.exit(1)
        self.reached |= {self.where(s) for s in sites if s.startswith('libcugl')}
        say('the scenario: a round makes %d driver calls; each failed in turn, for %s'
            % (calls, ' and '.join(a.results)))
        judge = self.judge_scenario
        jobs = [([a.scenario], {'CUGL_FAULT_CALL': str(n), 'CUGL_FAULT_RESULT': r}, judge)
                for r in a.results for n in range(1, calls + 1)]
        # The driver's loading: each of its first calls failed in turn.
        jobs += [([a.scenario, 'load'], {'CUGL_FAULT_CALL': str(n)}, judge)
                 for n in range(1, 4)]
        self.parallel(jobs)

    # --- the site sweep -----------------------------------------------------

    def programs(self):
        """(cmd, is_demo) of every program of the site sweep."""
        progs = [([t], False) for t in self.args.test]
        for d in self.args.demo:
            for path in DEMO_PATHS:
                progs.append(([d, '--headless', '--frames', '3', '--size', '128x96',
                               '--interop', path, '--screenshot',
                               os.path.join(self.tmp, 'shot-%s-%s.png'
                                            % (os.path.basename(d), path))], True))
        return progs

    def site_sweep(self):
        a = self.args
        progs = self.programs()
        say('the site sweep: %d programs run with nothing failed, side by side' % len(progs))
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            bases = list(pool.map(lambda p: self.once(p[0], {}, timeout=600), progs))
        reach = []  # (cmd, is_demo, name, calls, its sites)
        for (cmd, is_demo), (rc, out, calls, _, sites) in zip(progs, bases):
            name = os.path.basename(cmd[0]) + (' ' + cmd[7] if is_demo else '')
            if rc != 0:
                self.failures.append('%s fails with nothing injected (exit %s):\n    %s'
                                     % (name, rc, '\n    '.join(out.splitlines()[-5:])))
                continue
            mine = sorted(s for s in sites if s.startswith('libcugl'))
            self.reached |= {self.where(s) for s in mine}
            reach.append((cmd, is_demo, name, calls, mine))
        runs, chosen = choose_runs([(kind, calls, mine) for _, kind, _, calls, mine in reach],
                                   a.per_site, a.sample, a.seed)
        say('%d runs: each of %d call sites failed in the cheapest of the programs that reach '
            'it, and %d more drawn with seed %d'
            % (len(runs), len({s for s, _ in chosen}), len(runs) - len(chosen), a.seed))
        jobs = []
        for site, i in runs:
            cmd, is_demo, _, _, _ = reach[i]
            judge = self.judge_demo if is_demo else self.judge_test
            extra = {'CUGL_FAULT_RESULT': a.results[0], 'CUGL_FAULT_SITE': site}
            if not is_demo:
                # A test whose check failed leaves what it held (judge_test):
                # leaks are looked for in its run with nothing failed only.
                extra['ASAN_OPTIONS'] = self.base['ASAN_OPTIONS'].replace(
                    'detect_leaks=1', 'detect_leaks=0')
            jobs.append((cmd, extra, judge))
        for cmd, is_demo, name, calls, mine in reach:
            print('%s: %d driver calls from %d call sites' % (name, calls, len(mine)))
        self.parallel(jobs)

    @staticmethod
    def crashed(rc, out):
        if rc == 'timeout':
            return 'hung (timed out)'
        if isinstance(rc, int) and (rc < 0 or rc >= 128):
            said = [l for l in out.splitlines() if 'SUMMARY:' in l or 'ERROR:' in l]
            return 'crashed (exit %d)%s' % (rc, ''.join('\n    ' + l for l in said[:5]))
        marks = [l for l in out.splitlines() if any(m in l for m in CRASH_MARKS)]
        if marks:
            return 'crashed:\n    ' + '\n    '.join(marks[:5])
        return None

    def judge_scenario(self, rc, out, failed):
        kept = [l for l in out.splitlines() if l.startswith("a release's")]
        if kept:
            self.release_kept.append(kept[0])
        if rc == 0:
            return None
        defects = [l for l in out.splitlines() if l.startswith('DEFECT')]
        driver_kept = drivers_leak(out)
        if driver_kept and not defects and 'failed in a release: ' in out:
            self.release_kept.append("a release's %s failed: the driver kept %s"
                                     % (failed[0], driver_kept))
            return None
        kind = 'defect' if rc == 1 else 'crash or exit %s' % rc
        return '%s\n    %s' % (kind, '\n    '.join(defects or out.splitlines()[-5:]))

    def judge_test(self, rc, out, failed):
        # A test whose check failed jumps out of its case and leaves what it
        # held: the test's leak, not the library's. Leaks count in the
        # scenario and the demos, which clean up after a failure.
        return self.crashed(rc, '\n'.join(l for l in out.splitlines()
                                           if 'LeakSanitizer' not in l))

    def judge_demo(self, rc, out, failed):
        wrong = self.crashed(rc, out)
        kept = wrong and failed and RELEASES.search(failed[0]) and drivers_leak(out)
        if kept:
            self.release_kept.append("a release's %s failed: the driver kept %s"
                                     % (failed[0], kept))
            return None
        if wrong:
            return wrong
        if rc != 0 and failed and failed[0] not in out:
            return 'exit %d without naming the failed %s:\n    %s' % (
                rc, failed[0], '\n    '.join(out.splitlines()[-3:]))
        return None


def sweep(a, s):
    """Run the sweeps a asks for, print what they found; exit 1 on a failure."""
    if not a.no_scenario:
        s.scenario()
    else:
        s.scenario_round()  # a GPU is here, or the part skips
    scenario_sites = len(s.sites)
    if a.test or a.demo:
        s.site_sweep()
    static = source_sites(a.src)
    print('%d runs (%s), %d driver functions and %d call sites failed at least once '
          '(%d in the scenario sweep)' % (s.runs, ', '.join(a.results), len(s.functions),
                                          len(s.sites), scenario_sites))
    print('call sites reached: %d, of which failed: %d'
          % (len(s.reached), len(s.reached & s.sites)))
    if s.release_kept:
        print('%d runs failed a release, which then kept what it held:'
              % len(s.release_kept))
        for line in sorted(set(s.release_kept)):
            print('  ' + line)
    print('lib/ has %d driver call sites of %d functions'
          % (len(static), len({f for _, _, f in static})))
    print('functions failed: ' + ' '.join(sorted(s.functions)))
    unfailed = sorted(s.reached - s.sites)
    if unfailed:
        print('reached, never failed: ' + ' '.join(unfailed))
    never = unreached(static, s.reached)
    if never:
        print('call sites in lib/ no run reached (%d, by file and line): %s'
              % (len(never), ' '.join(never)))
    if s.failures:
        print('%d run(s) failed:' % len(s.failures))
        for f in s.failures:
            print('  ' + f)
        sys.exit(1)
    print('0 crashes, 0 defects')


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('usage: ')[1])
    ap.add_argument('scenario')
    ap.add_argument('shim')
    ap.add_argument('libcugl')
    ap.add_argument('src')
    ap.add_argument('results', nargs='*')
    ap.add_argument('--test', action='append', default=[])
    ap.add_argument('--demo', action='append', default=[])
    ap.add_argument('--per-site', type=int, default=1)
    ap.add_argument('--sample', type=int, default=0)
    ap.add_argument('--seed', type=int, default=int(os.environ.get('CUGL_FAULT_SEED', '1')))
    ap.add_argument('--jobs', type=int, default=min(12, os.cpu_count() or 1))
    ap.add_argument('--no-scenario', action='store_true',
                    help='the site sweep alone (a run split in parts)')
    a = ap.parse_args()
    a.results = a.results or ['oom', 'unknown']
    if a.no_scenario and not (a.test or a.demo):
        ap.error('--no-scenario leaves nothing to run: name programs with --test or --demo')
    s = Sweep(a)
    try:
        sweep(a, s)
    finally:
        # Every way out, a skip without a GPU included, leaves no folder.
        shutil.rmtree(s.tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
