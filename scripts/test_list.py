#!/usr/bin/env python3
"""The names of a configured build's tests, chosen by suite and by whether
meson may run them beside others (is_parallel), one a line, in meson's
order; or the ninja targets those tests need.

usage: test_list.py BUILD_DIR (--alone | --beside | --all | --targets)
                    [--suite S ...] [--also S ...] [--no-suite S ...]

  --alone     the tests that run alone (is_parallel: false)
  --beside    the tests that may run beside others
  --all       the tests, either way
  --targets   the files of the targets the tests use (their programs and
              what their commands and `depends` name), relative to
              BUILD_DIR: `ninja -C BUILD_DIR $(...)` builds what they run
  --suite S   only tests of suite S (several: of any of them)
  --also S    only tests of suite S as well (several: of all of them)
  --no-suite S  no test of suite S

Exits 2 where BUILD_DIR is not configured.
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('usage: ')[1].split('\n\n')[0])
    ap.add_argument('build')
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument('--alone', action='store_true')
    which.add_argument('--beside', action='store_true')
    which.add_argument('--all', action='store_true')
    which.add_argument('--targets', action='store_true')
    ap.add_argument('--suite', action='append', default=[])
    ap.add_argument('--also', action='append', default=[])
    ap.add_argument('--no-suite', action='append', default=[])
    a = ap.parse_args()
    path = os.path.join(a.build, 'meson-info', 'intro-tests.json')
    try:
        with open(path) as f:
            tests = json.load(f)
    except OSError as e:
        print(f'test_list.py: {a.build} is not a configured build ({e})', file=sys.stderr)
        sys.exit(2)
    files = {}
    if a.targets:
        with open(os.path.join(a.build, 'meson-info', 'intro-targets.json')) as f:
            files = {t['id']: t['filename'] for t in json.load(f)}
    needed = []
    for t in tests:
        # meson names a suite 'project:suite'.
        suites = {s.partition(':')[2] or s for s in t['suite']}
        if a.suite and not suites & set(a.suite):
            continue
        if suites & set(a.no_suite) or not set(a.also) <= suites:
            continue
        if a.targets:
            for d in t['depends']:
                for f in files.get(d, ()):
                    rel = os.path.relpath(f, os.path.abspath(a.build))
                    if rel not in needed:
                        needed.append(rel)
        elif a.all or t['is_parallel'] == a.beside:
            print(t['name'])
    for rel in needed:
        print(rel)


if __name__ == '__main__':
    main()
