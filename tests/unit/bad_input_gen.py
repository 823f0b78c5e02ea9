#!/usr/bin/env python3
"""The bad-input table: every public function of libcugl, called with bad values.

usage: bad_input_gen.py HEADER... OUTPUT.c

Reads each CUGL_API declaration of the headers and writes a C table of
calls: for each function a base call, then one call for each other value
of each parameter in turn; the same from a call with every pointer at
scratch memory, and from one with every value at its most hostile (0xff
scratch, the last of the values below). The values by type:

  an object handle (cugl_buffer *, ...)  NULL, and where a device is there
                                         (bad_object() in test_bad_input.c) a
                                         closed object of its kind
  a raw driver handle of foreign code    valid ones only (the default streams
  (cugl_stream_from_handle's)            and a stream made elsewhere): such a
                                         handle cannot be checked, and a
                                         garbage one may crash the driver
  any other pointer (outputs, shapes, descs, host memory)
                                         NULL, zeroed scratch memory, and
                                         where what it points to holds no
                                         pointer (numbers, descs of numbers,
                                         bytes), scratch memory of 0xff bytes:
                                         every size, count, flag and enum in
                                         it at its largest or -1
  sizes, counts, integers, enums, floats  0, -1 or the type's extremes,
                                          halves of them that overflow when
                                          doubled, out-of-range enum values,
                                          NaN, infinities, FLT_MAX
  strings (const char *)                  NULL, "", a string of 1 MiB; a path
                                          also / (a directory in the way) and,
                                          to read, /dev/zero (a file without
                                          end)

tests/unit/test_bad_input.c runs the table (without a GPU) and checks that
no call crashes or trips a sanitizer, and that every call returning a
cugl_status other than CUGL_OK leaves a message that starts with the
function's name. A function added to a header is in the table at the next
build; variadic functions are left out (their format strings are the
caller's contract).
"""
import re
import sys

from errors_doc import documented

HANDLES = {'cugl_device', 'cugl_stream', 'cugl_event', 'cugl_module', 'cugl_kernel',
           'cugl_memory_resource', 'cugl_buffer', 'cugl_array', 'cugl_mipmapped_array',
           'cugl_texture', 'cugl_surface', 'cugl_view', 'cugl_graphics_resource',
           'struct DLManagedTensor', 'struct DLManagedTensorVersioned',
           'cugl_app_context', 'cugl_app_shared', 'cugl_app_timer', 'cugl_app_ui',
           'cugl_app_server', 'cugl_app_target'}

# Functions that touch GL or the display whatever their arguments: called
# without a GL context they would use GL's unloaded entry points, or make a
# window. The gl suite tests them.
SKIP = {'cugl_app_context_create'}

# Raw driver handles a caller brings from its own CUDA code: only valid
# ones (a garbage CUstream is undefined behaviour in the driver itself).
FOREIGN = {('cugl_stream_from_handle', 'handle'): ['NULL', '(void *)1', '(void *)2',
                                                   'foreign_stream()']}

# Objects a device can make and close: a closed one is bad input too.
CLOSABLE = {'cugl_stream', 'cugl_event', 'cugl_memory_resource', 'cugl_buffer', 'cugl_array',
            'cugl_mipmapped_array', 'cugl_texture', 'cugl_surface', 'cugl_view'}

SCALARS = {
    'size_t': ['0', '1', '(size_t)1 << 40', 'SIZE_MAX / 2 + 1', 'SIZE_MAX'],
    'int': ['0', '-1', 'INT_MIN', 'INT_MAX / 2 + 1', 'INT_MAX', '4096'],
    'unsigned': ['0', 'UINT_MAX / 2 + 1', 'UINT_MAX', '7'],
    'int64_t': ['0', '-1', 'INT64_MIN', 'INT64_MAX / 2 + 1', 'INT64_MAX'],
    'uint64_t': ['0', 'UINT64_MAX', '(uint64_t)1 << 63', '1'],
    'uint32_t': ['0', 'UINT32_MAX / 2 + 1', 'UINT32_MAX'],
    'uint8_t': ['0', 'UINT8_MAX'],
    'bool': ['false', 'true'],
    'float': ['0.0f', 'NAN', '-1.0f', 'INFINITY', '-INFINITY', 'FLT_MAX', '-FLT_MAX'],
    'double': ['0.0', 'NAN', 'INFINITY', '-INFINITY', 'DBL_MAX'],
    'GLuint': ['0', '12345'],
    'GLenum': ['0', '0x1234'],
}


# Structs passed by value: a zero one, a nonsense one, a plausible one.
STRUCTS = {
    'cugl_dtype': ['(cugl_dtype){0, 0, 0}', '(cugl_dtype){99, 3, 0}', '(cugl_dtype){2, 32, 1}',
                   '(cugl_dtype){1, 8, 65535}'],
}


def split_params(text):
    text = ' '.join(text.split())
    if text in ('void', ''):
        return []
    return [p.strip() for p in text.split(',')]


# Structs of the headers that hold no pointer (filled by main): 0xff bytes
# in one of them are bad numbers, not a bad address.
PLAIN_STRUCTS = set()
# Function pointer types of the headers (filled by main): only NULL.
FUNCTION_TYPES = set()


def plain_structs(text):
    FUNCTION_TYPES.update(re.findall(r'typedef [^;(]*\(\s*\*\s*(\w+)\s*\)', text))
    for m in re.finditer(r'typedef struct \w+\s*\{(.*?)\}\s*(\w+);', text, re.S):
        body = re.sub(r'/\*.*?\*/|//[^\n]*', '', m.group(1), flags=re.S)
        if '*' not in body:
            PLAIN_STRUCTS.add(m.group(2))


def values(param, function=''):
    """(C type for a cast, list of C expressions) for one parameter."""
    m = re.match(r'(.*?)(\w+)\s*(\[[^\]]*\])?$', param)
    ctype, name, array = m.group(1).strip(), m.group(2), m.group(3)
    if (function, name) in FOREIGN:
        return FOREIGN[(function, name)]
    if array:  # size_t shape[3], float view[16]: a pointer
        ctype = ctype + ' *'
    base = ctype.replace('const ', '').replace('*', '').strip()
    stars = ctype.count('*')
    if '(*' in param or base in FUNCTION_TYPES:  # a function pointer
        return None
    if stars == 0:
        if base in SCALARS:
            return [f'({ctype})({v})' for v in SCALARS[base]]
        if base in STRUCTS:
            return STRUCTS[base]
        if base.startswith('cugl_'):  # an enum
            return [f'({base})0', f'({base})-1', f'({base})9999']
        raise SystemExit(f'bad_input_gen.py: no values for type {ctype!r} in {param!r}')
    if base == 'char' and stars == 1 and 'const' in ctype:
        strings = ['NULL', '""', 'huge_string()']
        if name == 'path':
            # A file without end to read; a directory in the way to write
            # (a path that works would make the writer read as many pixels
            # or bytes as the sizes say: the caller's contract, not
            # something a table of scratch memory can keep).
            reads = function.startswith(('cugl_app_read', 'cugl_app_events_read'))
            strings += ['"/dev/zero"', '"/"'] if reads else ['"/"']
        return strings
    if stars == 1 and base in CLOSABLE:
        return ['NULL', f'({base} *)bad_object("{base}")']
    if stars == 1 and base in HANDLES:
        return ['NULL']
    if stars == 1 and (base in SCALARS or base in PLAIN_STRUCTS or base == 'void'):
        return ['NULL', f'(void *)scratch_at({{slot}})', f'(void *)scratch_ff({{slot}})']
    return ['NULL', f'(void *)scratch_at({{slot}})']


def said(docs, name, names, args):
    """What the header says of a call, as C initializers: the statuses it
    may return (a mask; ~0u where its list is open), the one it gives a
    NULL, and whether the call holds a NULL where its @param allows none,
    and a closed object."""
    statuses, open_ended, optional = docs.get(name, ({}, True, set()))
    mask = '~0u' if open_ended else ' | '.join(
        ['1u << CUGL_OK'] + [f'1u << {st}' for st in sorted(statuses)])
    null_status = next((st for st in sorted(statuses)
                        if any(re.search(r'\bNULL\b', c) for c in statuses[st])), 'CUGL_OK')
    has_null = any(a == 'NULL' and n not in optional for n, a in zip(names, args))
    has_closed = any('bad_object' in a for a in args)
    return (f'{mask}, {null_status}, {"true" if has_null else "false"}, '
            f'{"true" if has_closed else "false"}')


def main():
    headers, output = sys.argv[1:-1], sys.argv[-1]
    calls = []
    for path in headers:
        plain_structs(open(path, encoding='utf-8').read())
    docs = documented(open(h, encoding='utf-8').read() for h in headers)
    guards = {'app_ui.h': 'CUGL_APP_HAS_UI', 'app_serve.h': 'CUGL_APP_HAS_SERVE'}
    for path in headers:
        guard = guards.get(path.rsplit('/', 1)[-1])
        text = open(path, encoding='utf-8').read()
        for m in re.finditer(r'CUGL_API\s+([^;{(]*?)\b(cugl_\w+)\s*\(([^)]*)\)', text, re.S):
            ret, name, params = ' '.join(m.group(1).split()), m.group(2), split_params(m.group(3))
            if '...' in params or name in SKIP:
                continue
            vals = [values(p, name) for p in params]
            # What frees takes only what it handed out: NULL is the bad input here.
            if name.endswith(('_free', '_destroy', '_release', '_close')):
                vals = [['NULL'] if v and v[0] == 'NULL' else v for v in vals]
            if any(v is None for v in vals):
                vals = [v if v is not None else ['NULL'] for v in vals]
            status = ret == 'cugl_status'
            # Objects a successful call hands out, released again.
            cleanup = []
            for i, prm in enumerate(params):
                mm = re.match(r'(cugl_\w+)\s*\*\*\s*\w+$', prm.replace('const ', ''))
                if mm and mm.group(1) in HANDLES and mm.group(1) != 'cugl_device':
                    t = mm.group(1)
                    free = '_destroy' if t.startswith('cugl_app_') else '_release'
                    cleanup.append((i, f'{t}{free}(*({t} **)scratch_at({i}));'))
                elif re.match(r'struct DLManagedTensor\s*\*\*', prm):
                    cleanup.append((i, f'{{ struct DLManagedTensor *t = *(struct DLManagedTensor **)'
                                       f'scratch_at({i}); if (t && t->deleter) t->deleter(t); }}'))
            base = [v[0] for v in vals]
            # every pointer a scratch buffer at once: the checks past the first NULL
            allp = [v[1] if len(v) > 1 and 'scratch' in v[1] else v[0] for v in vals]
            # every pointer at 0xff scratch where allowed and every number at
            # its last value (the extremes): all of it hostile at once
            hostile = [next((a for a in v if 'scratch_ff' in a), v[-1]) if 'scratch' in ''.join(v)
                       else v[-1] for v in vals]
            variants = []
            starts = [base]
            for s in (allp, hostile):
                if s not in starts:
                    starts.append(s)
            for start in starts:
                variants.append(list(start))
                for i, v in enumerate(vals):
                    for alt in v:
                        if alt == start[i]:
                            continue
                        call = list(start)
                        call[i] = alt
                        if call not in variants:
                            variants.append(call)
            for args in variants:
                args = [a.replace('{slot}', str(i)) for i, a in enumerate(args)]
                done = ' '.join(c for i, c in cleanup if 'scratch' in args[i])
                names = [re.match(r'.*?(\w+)\s*(\[[^\]]*\])?$', prm).group(1) for prm in params]
                calls.append((name, status, ', '.join(args), done, guard,
                              said(docs, name, names, args)))
    with open(output, 'w', encoding='utf-8') as f:
        f.write('/* Generated by tests/unit/bad_input_gen.py from the public headers. */\n')
        f.write('#include "bad_input.h"\n')
        if any('/app/' in h for h in headers):
            f.write('#include <cugl/app.h>\n#include <cugl/app_shared.h>\n')
            f.write('#if CUGL_APP_HAS_UI\n#include <cugl/app_ui.h>\n#endif\n')
            f.write('#if CUGL_APP_HAS_SERVE\n#include <cugl/app_serve.h>\n#endif\n')
        f.write('\n')
        for i, (name, status, args, done, guard, _) in enumerate(calls):
            if guard:
                f.write(f'#if {guard}\n')
            if status:
                body = f'cugl_status st = {name}({args});'
                if done:
                    body += f' if (st == CUGL_OK) {{ {done} }}'
                body += ' return st;'
            else:
                body = f'(void){name}({args}); return CUGL_OK;'
            f.write(f'static cugl_status call_{i}(void)\n{{\n    {body}\n}}\n')
            if guard:
                f.write('#endif\n')
        f.write('\nconst bad_input_case bad_input_cases[] = {\n')
        for i, (name, status, args, done, guard, doc) in enumerate(calls):
            quoted = args.replace('\\', '\\\\').replace('"', '\\"')
            row = (f'    {{"{name}", {"true" if status else "false"}, call_{i}, "{quoted}", '
                   f'{doc}}},\n')
            f.write(f'#if {guard}\n{row}#endif\n' if guard else row)
        f.write('};\n')
        f.write('const size_t bad_input_count = sizeof bad_input_cases / sizeof bad_input_cases[0];\n')


if __name__ == '__main__':
    main()
