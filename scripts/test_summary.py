#!/usr/bin/env python3
"""Per build and suite, how many tests passed, failed and were skipped, from
meson test's JSON logs (<build>/meson-logs/<logbase>.json), as a table.

usage: test_summary.py [--prefix TEXT] [--no-skip] [--slowest N] LOG.json...

Under the table, each failed test's name, its first complaint (a
sanitizer's error, a TAP "not ok") and the last lines of its output, so
that a log of which only the end is kept still says what failed.
Exits 1 when a test failed (FAIL, ERROR, TIMEOUT, UNEXPECTEDPASS, ...) or a
log is missing, and with --no-skip also when one was skipped; else 0.
With --slowest N, then the N tests that took longest, with their runs:
where a test command's time goes.
"""
import argparse
import json
import os
import re
import sys

PASSED = ('OK', 'EXPECTEDFAIL')


TAIL_LINES = 15


def read(path, failures, times=None):
    """{suite: [ok, failed, skipped]} of one log, each failed test's
    (name, result, output) appended to failures; meson 1.0 names a test
    'project:suite / name', later ones 'suite - project:name' (the first
    of its suites), and neither writes a suite of its own."""
    counts = {}
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            name = t['name']
            if ' / ' in name:
                suite = name.split(' / ')[0].partition(':')[2]
            else:
                suite = name.split(' - ')[0] if ' - ' in name else ''
            suite = suite or '?'
            c = counts.setdefault(suite, [0, 0, 0])
            if times is not None:
                times.append((t.get('duration') or 0.0, name))
            result = t['result']
            kind = 0 if result in PASSED else 2 if result == 'SKIP' else 1
            c[kind] += 1
            if kind == 1:
                failures.append((name, result,
                                 (t.get('stdout') or '') + (t.get('stderr') or '')))
    return counts


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('usage: ')[1])
    ap.add_argument('--prefix', default='')
    ap.add_argument('--no-skip', action='store_true')
    ap.add_argument('--slowest', type=int, default=0, metavar='N')
    ap.add_argument('logs', nargs='+')
    a = ap.parse_args()
    # A part's tests that ran alone (RUN-alone.json) count with its others.
    merged, missing, failures, times = {}, [], [], []
    for path in a.logs:
        build = os.path.dirname(os.path.dirname(path))
        run = os.path.splitext(os.path.basename(path))[0]
        if run.endswith('-alone'):
            run = run[:-len('-alone')]
        if not os.path.exists(path):
            missing.append(path)
            continue
        failed, took = [], []
        for suite, c in read(path, failed, took).items():
            m = merged.setdefault(('%s (%s)' % (build, run), suite), [0, 0, 0])
            for i in range(3):
                m[i] += c[i]
        failures += [('%s (%s) %s' % (build, run, name), result, out)
                     for name, result, out in failed]
        times += [(d, '%s (%s) %s' % (build, run, name)) for d, name in took]
    runs = list(dict.fromkeys(k[0] for k in merged))
    rows = [[k[0], k[1]] + merged[k]
            for k in sorted(merged, key=lambda k: (runs.index(k[0]), k[1]))]
    header = ['build (run)', 'suite', 'ok', 'fail', 'skip']
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(5)]
    for r in [header] + rows:
        print(a.prefix + '  '.join(str(v).ljust(w) if i < 2 else str(v).rjust(w)
                                   for i, (v, w) in enumerate(zip(r, widths))).rstrip())
    total = [sum(r[i] for r in rows) for i in (2, 3, 4)]
    print('%s%d ok, %d failed, %d skipped' % (a.prefix, *total))
    for path in missing:
        print('%sno log %s: that run did not finish' % (a.prefix, path))
    for name, result, out in failures:
        every = out.rstrip('\n').split('\n') if out.strip() else []
        lines = every[-TAIL_LINES:]
        # A sanitizer's or a TAP test's first complaint, where the tail
        # is all stack frames.
        first = next((x for x in every if re.search(r'==\d+==ERROR|^not ok|^fuzz: ', x)), None)
        if first is not None and first not in lines:
            lines = [first, '...'] + lines
        print('%s%s: %s; %s' % (a.prefix, result, name,
                                'its last lines:' if lines else 'no output'))
        for line in lines:
            print('%s  | %s' % (a.prefix, line[:200]))
    if a.slowest > 0 and times:
        print('%sthe %d slowest tests:' % (a.prefix, min(a.slowest, len(times))))
        for d, name in sorted(times, reverse=True)[:a.slowest]:
            print('%s  %7.1f s  %s' % (a.prefix, d, name))
    bad = total[1] > 0 or missing or (a.no_skip and total[2] > 0)
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
