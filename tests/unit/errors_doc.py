#!/usr/bin/env python3
"""What each public function's header says it returns: its @errors list.

usage: errors_doc.py HEADER... OUTPUT.c

As a module (bad_input_gen.py imports it): documented(texts) reads the
doc comment before every CUGL_API declaration and gives, for each function
that returns a cugl_status, the statuses its @errors names with the
conditions written beside each ("CUGL_ERROR_INVALID_ARGUMENT (NULL; the
same device)": INVALID_ARGUMENT for "NULL" and for "the same device").
"as cugl_x" and "the statuses of cugl_x" take cugl_x's in too; "the
statuses of what it calls" leaves the list open (any status may come from
below). A function that returns a cugl_status without an @errors list is
an error of the header: the build stops and names it.

As a program: writes a C table of every (function, status, condition) for
the documented-conditions test (tests/gl/test_documented.c), which looks
the status of each of its cases up here, so that a case holds the header
to its word and a header that changes what it says fails the case.
"""
import re
import sys

STATUSES = ['CUGL_OK', 'CUGL_ERROR_INVALID_ARGUMENT', 'CUGL_ERROR_CLOSED',
            'CUGL_ERROR_INVALID_STATE', 'CUGL_ERROR_NOT_SUPPORTED', 'CUGL_ERROR_OUT_OF_MEMORY',
            'CUGL_ERROR_NO_DRIVER', 'CUGL_ERROR_NO_DEVICE', 'CUGL_ERROR_NOT_READY',
            'CUGL_ERROR_CUDA', 'CUGL_ERROR_GL']

# Functions that return a cugl_status without failing: what they return is
# a status they were given or keep.
NOT_FALLIBLE = {'cugl_last_status', 'cugl_report_error'}

DECL = re.compile(r'/\*\*((?:(?!\*/).)*?)\*/\s*CUGL_API\s+([^;{(]*?)\b(cugl_\w+)\s*\(', re.S)


def errors_text(doc):
    """The words of a doc comment's @errors, up to its next tag."""
    m = re.search(r'@errors\b(.*?)(?=@(?!errors)\w|\Z)', doc, re.S)
    if not m:
        return None
    return ' '.join(w for w in m.group(1).replace('*', ' ').split())


def nullable(doc):
    """The parameters whose @param text lets them be NULL ("or NULL",
    "NULL: the defaults"; "NULL on failure" of an output does not)."""
    names = set()
    for m in re.finditer(r'@param(?:\[\w+\])?\s+(\w+)\s+(.*?)(?=@\w|\Z)', doc, re.S):
        text = re.sub(r'NULL on failure|0 on failure', '', ' '.join(m.group(2).split()))
        if re.search(r'\bNULL\b', text):
            names.add(m.group(1))
    return names


def parse(text):
    """{status: [condition, ...]} of one @errors text, the functions it
    takes statuses from, and whether the list is open."""
    found = {}
    for m in re.finditer(r'\b(CUGL_ERROR_\w+)', text):
        status = m.group(1)
        conditions = found.setdefault(status, [])
        rest = text[m.end():].lstrip()
        if rest.startswith('('):
            depth = 0
            for i, c in enumerate(rest):
                depth += c == '('
                depth -= c == ')'
                if depth == 0:
                    inner = rest[1:i]
                    conditions += [c.strip() for c in re.split(r';', inner) if c.strip()]
                    break
    takes = [f for f in re.findall(r'\b(cugl_[a-z]\w*)', text)]
    open_ended = bool(re.search(r'statuses of what|what it calls', text))
    return found, takes, open_ended


def documented(texts):
    """{function: (statuses {status: [conditions]}, open_ended, the
    parameters that may be NULL)} for every public function of the header
    texts that returns a cugl_status."""
    raw, optional = {}, {}
    for text in texts:
        for m in DECL.finditer(text):
            ret, name = ' '.join(m.group(2).split()), m.group(3)
            if ret != 'cugl_status' or name in NOT_FALLIBLE:
                continue
            e = errors_text(m.group(1))
            if e is None:
                raise SystemExit(f'errors_doc.py: {name} returns a cugl_status and its header '
                                 'lists no @errors')
            raw[name] = parse(e)
            optional[name] = nullable(m.group(1))
    resolved = {}

    def resolve(name, seen):
        if name in resolved:
            return resolved[name]
        found, takes, open_ended = raw[name]
        statuses = {k: list(v) for k, v in found.items()}
        for other in takes:
            if other in raw and other not in seen:
                more, more_open, _ = resolve(other, seen | {name})
                open_ended = open_ended or more_open
                for k, v in more.items():
                    statuses.setdefault(k, []).extend(v)
        resolved[name] = (statuses, open_ended, optional[name])
        return resolved[name]

    for name in raw:
        resolve(name, {name})
    for name, (statuses, _, _) in resolved.items():
        for s in statuses:
            if s not in STATUSES:
                raise SystemExit(f'errors_doc.py: {name} lists {s}, which is no cugl_status')
    return resolved


def c_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def main():
    headers, output = sys.argv[1:-1], sys.argv[-1]
    docs = documented(open(h, encoding='utf-8').read() for h in headers)
    with open(output, 'w', encoding='utf-8') as f:
        f.write('/* Generated by tests/unit/errors_doc.py from the public headers. */\n')
        f.write('#include "documented.h"\n\n')
        f.write('const documented_condition documented_conditions[] = {\n')
        for name in sorted(docs):
            statuses, open_ended, _ = docs[name]
            for status in sorted(statuses):
                for cond in statuses[status] or ['']:
                    f.write(f'    {{"{name}", {status}, {c_string(cond)}, '
                            f'{"true" if open_ended else "false"}}},\n')
        f.write('};\n')
        f.write('const size_t documented_condition_count =\n'
                '    sizeof documented_conditions / sizeof documented_conditions[0];\n')


if __name__ == '__main__':
    main()
