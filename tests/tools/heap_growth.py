#!/usr/bin/env python3
"""Which code's heap grew: compares two reports of heap_owners.so (see
heap_owners.c) of one run, by library and by call site.

usage: heap_growth.py REPORTS [FROM [TO]]
  FROM, TO: report numbers (from 0; negative from the end), default 1 and
  -2: the first after start-up and the last before exit. -1 is the one
  written at exit, after the program's own clean-up.
"""
import collections
import sys


def reports(path):
    out, cur = [], None
    for line in open(path):
        w = line.split()
        if not w:
            continue
        if w[0] == 't':
            cur = {'t': float(w[1]), 'bytes': int(w[2]), 'blocks': int(w[3]), 'sites': {}}
        elif w[0] == 'site' and cur is not None:
            cur['sites'][w[1]] = (w[2], int(w[3]), int(w[4]))
        elif w[0] == 'end' and cur is not None:
            out.append(cur)
            cur = None
    return out


def main():
    path = sys.argv[1]
    a_i = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    b_i = int(sys.argv[3]) if len(sys.argv) > 3 else -2
    rs = reports(path)
    if len(rs) < 2:
        sys.exit('heap_growth.py: %s has %d report(s); two are needed' % (path, len(rs)))
    a, b = rs[a_i], rs[b_i]
    dt = b['t'] - a['t']
    print('reports at %.1f s and %.1f s: %d -> %d live bytes (%+d), %d -> %d blocks (%+d)'
          % (a['t'], b['t'], a['bytes'], b['bytes'], b['bytes'] - a['bytes'], a['blocks'],
             b['blocks'], b['blocks'] - a['blocks']))
    by_lib = collections.Counter()
    by_site = []
    for site in set(a['sites']) | set(b['sites']):
        sym, bb, bn = b['sites'].get(site, ('-', 0, 0))
        _, ab, an = a['sites'].get(site, (sym, 0, 0))
        if bb != ab or bn != an:
            by_lib[site.split('+')[0]] += bb - ab
            by_site.append((bb - ab, bn - an, site, sym))
    print('by library (bytes):')
    for lib, d in sorted(by_lib.items(), key=lambda kv: -abs(kv[1])):
        print('  %+10d  %s' % (d, lib))
    print('by call site (bytes, blocks):')
    for d, n, site, sym in sorted(by_site, key=lambda r: -abs(r[0]))[:25]:
        print('  %+10d %+7d  %s %s' % (d, n, site, sym if sym != '-' else ''))
    if dt > 0:
        print('%.1f s apart: %+.1f bytes/s' % (dt, (b['bytes'] - a['bytes']) / dt))


main()
