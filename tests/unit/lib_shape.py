#!/usr/bin/env python3
"""The shape the libraries keep (TAP): no file in lib/ over 900 lines, no
function in lib/ over 80; no library writes to stderr or stdout (messages
go through the error string and the callbacks); one way to check and
report (lib/internal/check.h: no library defines a check, try or fail
macro of its own); and no circle of includes or calls between the files
of lib/app (each wing) or demos/common: file A calls or includes what B
defines and B, by some way, what A does.

usage: lib_shape.py SOURCE_ROOT
"""
import os
import re
import sys

MAX_LINES = 900
MAX_FUNCTION = 80
SOURCES = ('.c', '.h', '.cpp')


def files_under(root, sub, exts=SOURCES):
    out = []
    for d, _, names in os.walk(os.path.join(root, sub)):
        out += [os.path.join(d, n) for n in sorted(names) if n.endswith(exts)]
    return sorted(out)


def strip_comments(text):
    """The code alone: comments and string literals blanked, lines kept."""
    def blank(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text,
                  flags=re.S)


def functions(code):
    """(name, first line, lines) of each function defined at file scope: a
    '{' in column 0 after a signature, to its '}' in column 0."""
    lines = code.split('\n')
    out, start, name = [], None, None
    for i, line in enumerate(lines):
        if start is None and line.startswith('{'):
            sig = ' '.join(lines[max(0, i - 6):i])
            m = re.search(r'(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?$', sig)
            if m and not re.search(r'=\s*$', sig):
                start, name = i, m.group(1)
        elif start is not None and line.startswith('}'):
            out.append((name, start + 1, i - start + 1))
            start = None
    return out


def defined_names(code):
    """Functions and objects a file defines for other files: file-scope
    definitions that are not static."""
    names = set()
    for name, _, _ in functions(code):
        names.add(name)
    statics = set(re.findall(r'^static\b[^;{(=]*?\b(\w+)\s*[(\[=;]', code, re.M))
    statics |= set(re.findall(r'^static inline\b[^;{(]*?\b(\w+)\s*\(', code, re.M))
    names -= statics
    names |= set(re.findall(r'^(?:const\s+)?(?:struct\s+)?\w+\s+\**(\w+)\s*(?:\[[^\]]*\])*\s*=', code,
                            re.M)) - statics
    return {n for n in names if n not in ('main',)}


def circles(graph):
    """Each strongly connected set of two files or more (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def call_graph(paths):
    """Source file -> the source files of `paths` whose functions or objects
    (those not static) it uses."""
    code = {p: strip_comments(open(p, errors='replace').read()) for p in paths}
    sources = [p for p in paths if p.endswith(('.c', '.cpp'))]
    owner = {}
    for p in sources:
        for n in defined_names(code[p]):
            owner.setdefault(n, p)
    graph = {}
    for p in sources:
        deps = graph.setdefault(p, set())
        for word in set(re.findall(r'\b[A-Za-z_]\w*\b', code[p])):
            q = owner.get(word)
            if q and q != p:
                deps.add(q)
    return graph


def include_graph(paths):
    """Header -> the headers of `paths` it includes."""
    by_name = {}
    for p in paths:
        by_name.setdefault(os.path.basename(p), p)
    graph = {}
    for p in paths:
        if p.endswith('.h'):
            deps = graph.setdefault(p, set())
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(p, errors='replace').read(),
                                  re.M):
                q = by_name.get(os.path.basename(inc))
                if q and q != p:
                    deps.add(q)
    return graph


def self_check():
    """What each check must find, on made-up files: a long function, a
    write to stderr, a circle of calls, a circle of includes."""
    problems = []
    long_fn = 'static int f(void)\n{\n' + '    x();\n' * 90 + '}\n'
    if [n for _, _, n in functions(strip_comments(long_fn))] != [92]:
        problems.append('a function of 92 lines was not measured so')
    if functions(strip_comments('/* int g(void)\n{ */\nint h = 1;\n')):
        problems.append('a comment was taken for a function')
    writes = strip_comments('void f(void) { fprintf(stderr, "x"); } /* stderr */\n')
    if len(re.findall(r'\bstderr\b', writes)) != 1:
        problems.append('a write to stderr was not told from a comment naming it')
    if circles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) != [['a', 'b', 'c']]:
        problems.append('the circle a -> b -> c -> a was not found alone')
    if circles({'a': {'b'}, 'b': set()}):
        problems.append('a line a -> b was taken for a circle')
    if defined_names('static int f(void)\n{\n}\nint g(void)\n{\n}\n') != {'g'}:
        problems.append('a static function was taken for one other files may call')
    return problems


def main():
    root = sys.argv[1]
    rel = lambda p: os.path.relpath(p, root)
    checks = [('the checks find what they look for, on made-up files', self_check())]
    lib = files_under(root, 'lib')
    long_files = ['%s (%d lines)' % (rel(p), n) for p in lib
                  for n in [open(p, errors='replace').read().count('\n')] if n > MAX_LINES]
    checks.append(('no file in lib/ is over %d lines' % MAX_LINES, long_files))
    long_functions = []
    for p in lib:
        if p.endswith(('.c', '.cpp')):
            for name, line, n in functions(strip_comments(open(p, errors='replace').read())):
                if n > MAX_FUNCTION:
                    long_functions.append('%s:%d %s (%d lines)' % (rel(p), line, name, n))
    checks.append(('no function in lib/ is over %d lines' % MAX_FUNCTION, long_functions))
    writes = []
    for p in lib:
        for i, line in enumerate(strip_comments(open(p, errors='replace').read()).split('\n')):
            if re.search(r'\b(stderr|stdout|perror)\b|\b(printf|puts|putchar)\s*\(', line):
                writes.append('%s:%d: %s' % (rel(p), i + 1, line.strip()))
    checks.append(('no library writes to stderr or stdout', writes))
    idioms = []
    for p in lib:
        if rel(p) == os.path.join('lib', 'internal', 'check.h'):
            continue
        text = strip_comments(open(p, errors='replace').read())
        for m in re.finditer(r'^\s*#\s*define\s+(\w*(CHECK|TRY|FAIL|RETURN_IF)\w*)', text, re.M | re.I):
            idioms.append('%s: #define %s' % (rel(p), m.group(1)))
        for m in re.finditer(r'^(?!CUGL_API).*\bcugl_report_error\s*\(', text, re.M):
            idioms.append('%s: cugl_report_error called (cugl__fail is the one way)' % rel(p))
    checks.append(('one way to check and report: lib/internal/check.h', idioms))
    wings = [('lib/app', files_under(root, 'lib/app')), ('demos/common', files_under(root, 'demos/common'))]
    found = []
    for name, paths in wings:
        for kind, graph in (('calls', call_graph(paths)), ('includes', include_graph(paths))):
            for c in circles(graph):
                found.append('%s, %s: %s' % (name, kind, ' <-> '.join(rel(p) for p in c)))
    checks.append(('no circle of includes or calls between the files of lib/app or demos/common',
                   found))
    print('1..%d' % len(checks))
    bad = 0
    for i, (what, problems) in enumerate(checks, 1):
        if problems:
            bad += 1
            print('not ok %d - %s' % (i, what))
            for x in problems:
                print('# %s' % x)
        else:
            print('ok %d - %s' % (i, what))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
