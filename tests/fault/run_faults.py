#!/usr/bin/env python3
"""Driver fault injection: run fault_scenario under the fault shim once with
nothing failed (to count the driver calls of a round), then once per call
with that call failed (CUGL_FAULT_CALL=1, 2, ...), and the driver's loading
with each of its calls failed. A run passes when the scenario exits 0: no
crash, every failure named, round 2 whole, fds and pool memory back (see
fault_scenario.c). Prints the runs, the driver functions and call sites
failed at least once, and the call sites in lib/ for comparison; exits 1
when a run crashed or found a defect, 77 (skip) without a GPU.

usage: run_faults.py SCENARIO SHIM LIBCUGL SOURCE_DIR [RESULT ...]
  RESULT: CUGL_FAULT_RESULT values to sweep with (default: oom unknown)
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(scenario, env, args=(), timeout=120):
    try:
        p = subprocess.run([scenario, *args], env=env, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 'timeout', 'timed out after %d s' % timeout


def read_log(path):
    calls, failed = 0, None
    if os.path.exists(path):
        for line in open(path):
            w = line.split()
            if w[0] == 'calls':
                calls = int(w[1])
            elif w[0] == 'failed':
                failed = (w[1], int(w[2]), w[3])
    return calls, failed


def source_sites(src):
    """Driver call sites in lib/: (file, line, function) of each call."""
    sites = []
    pat = re.compile(r'(?:cugl__cu\.|CUGL_CU\(\s*|CUGL_CU_AS\([^,()]*,\s*)(cu[A-Z]\w*)')
    for f in sorted(glob.glob(os.path.join(src, 'lib', '*', '*.c'))):
        for n, line in enumerate(open(f), 1):
            for m in pat.finditer(line):
                sites.append((os.path.relpath(f, src), n, m.group(1)))
    return sites


def main():
    scenario, shim, libcugl, src = sys.argv[1:5]
    results = sys.argv[5:] or ['oom', 'unknown']
    tmp = tempfile.mkdtemp(prefix='cugl-fault-')
    log = os.path.join(tmp, 'log')
    base = dict(os.environ, CUGL_LIBCUDA=shim, CUGL_FAULT_LOG=log)
    for k in ('CUGL_FAULT_CALL', 'CUGL_FAULT_FUNC', 'CUGL_FAULT_OCCURRENCE', 'CUGL_FAULT_RESULT'):
        base.pop(k, None)

    rc, out = run(scenario, base)
    if rc == 77:
        print('run_faults: skipped: ' + (out.strip().splitlines() or ['no GPU'])[-1])
        sys.exit(1 if os.environ.get('CUGL_TEST_NO_SKIP') == '1' else 77)
    calls, _ = read_log(log)
    if rc != 0 or calls == 0:
        print(out)
        print('run_faults: the scenario fails with nothing injected (exit %s, %d calls)'
              % (rc, calls))
        sys.exit(1)
    print('a round makes %d driver calls' % calls)

    addr2line = shutil.which('addr2line')
    site_cache = {}

    def where(caller):
        """file:line of a caller "libcugl.so.0.1.0+0x1234", where addr2line can tell."""
        if caller in site_cache:
            return site_cache[caller]
        name, _, off = caller.partition('+')
        loc = caller
        if addr2line and name.startswith('libcugl'):
            p = subprocess.run([addr2line, '-e', libcugl, hex(int(off, 16) - 1)],
                               capture_output=True, text=True)
            text = p.stdout.strip()
            if text and not text.startswith('??'):
                loc = os.path.basename(text.split(':')[0]) + ':' + text.split(':')[1].split()[0]
        site_cache[caller] = loc
        return loc

    failures = []
    functions, sites, runs = set(), set(), 0
    for result in results:
        for n in range(1, calls + 1):
            env = dict(base, CUGL_FAULT_CALL=str(n), CUGL_FAULT_RESULT=result)
            rc, out = run(scenario, env)
            runs += 1
            _, failed = read_log(log)
            if failed:
                functions.add(failed[0])
                sites.add(where(failed[2]))
            what = '%s at call %d (%s)' % (result, n, failed[0] if failed else 'no call failed')
            if rc != 0:
                defects = [l for l in out.splitlines() if l.startswith('DEFECT')]
                kind = 'defect' if rc == 1 else 'crash or exit %s' % rc
                failures.append('%s: %s\n    %s' % (what, kind,
                                                   '\n    '.join(defects or out.splitlines()[-5:])))
    # The driver's loading: each of its first calls failed in turn.
    for n in range(1, 4):
        env = dict(base, CUGL_FAULT_CALL=str(n))
        rc, out = run(scenario, env, ['load'])
        runs += 1
        _, failed = read_log(log)
        if failed:
            functions.add(failed[0])
            sites.add(where(failed[2]))
        if rc != 0:
            failures.append('load, call %d: exit %s\n    %s' % (n, rc, out.strip()))

    static = source_sites(src)
    print('%d runs (%s), %d driver functions and %d call sites failed at least once'
          % (runs, ', '.join(results), len(functions), len(sites)))
    print('lib/ has %d driver call sites of %d functions'
          % (len(static), len({f for _, _, f in static})))
    print('functions failed: ' + ' '.join(sorted(functions)))
    shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print('%d run(s) failed:' % len(failures))
        for f in failures:
            print('  ' + f)
        sys.exit(1)
    print('0 crashes, 0 defects')


main()
