#!/usr/bin/env python3
"""The bad-input table: every public function of libcugl, called with bad values.

usage: bad_input_gen.py HEADER... OUTPUT.c

Reads each CUGL_API declaration of the headers and writes a C table of
calls: for each function a base call, then one call for each other value
of each parameter in turn. The values by type:

  an object handle (cugl_buffer *, ...)  NULL
  any other pointer (outputs, shapes, descs, host memory)
                                         NULL, zeroed scratch memory
  sizes, counts, integers, enums, floats  0, -1 or the type's extremes,
                                          out-of-range enum values, NaN
  strings                                 NULL, ""

tests/unit/test_bad_input.c runs the table (without a GPU) and checks that
no call crashes or trips a sanitizer, and that every call returning a
cugl_status other than CUGL_OK leaves a message that starts with the
function's name. A function added to a header is in the table at the next
build; variadic functions are left out (their format strings are the
caller's contract).
"""
import re
import sys

HANDLES = {'cugl_device', 'cugl_stream', 'cugl_event', 'cugl_module', 'cugl_kernel',
           'cugl_memory_resource', 'cugl_buffer', 'cugl_array', 'cugl_mipmapped_array',
           'cugl_texture', 'cugl_surface', 'cugl_view', 'cugl_graphics_resource',
           'struct DLManagedTensor', 'struct DLManagedTensorVersioned'}

SCALARS = {
    'size_t': ['0', '1', 'SIZE_MAX'],
    'int': ['0', '-1', 'INT_MIN', 'INT_MAX', '4096'],
    'unsigned': ['0', 'UINT_MAX', '7'],
    'int64_t': ['0', '-1', 'INT64_MIN', 'INT64_MAX'],
    'uint64_t': ['0', 'UINT64_MAX', '1'],
    'uint32_t': ['0', 'UINT32_MAX'],
    'uint8_t': ['0', 'UINT8_MAX'],
    'bool': ['false', 'true'],
    'float': ['0.0f', 'NAN', '-1.0f'],
    'double': ['0.0', 'NAN'],
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


def values(param):
    """(C type for a cast, list of C expressions) for one parameter."""
    m = re.match(r'(.*?)(\w+)\s*(\[[^\]]*\])?$', param)
    ctype, array = m.group(1).strip(), m.group(3)
    if array:  # size_t shape[3], float view[16]: a pointer
        ctype = ctype + ' *'
    base = ctype.replace('const ', '').replace('*', '').strip()
    stars = ctype.count('*')
    if '(*' in param:  # a function pointer
        return None
    if stars == 0:
        if base in SCALARS:
            return [f'({ctype})({v})' for v in SCALARS[base]]
        if base in STRUCTS:
            return STRUCTS[base]
        if base.startswith('cugl_'):  # an enum
            return [f'({base})0', f'({base})-1', f'({base})9999']
        raise SystemExit(f'bad_input_gen.py: no values for type {ctype!r} in {param!r}')
    if base == 'char' and stars == 1:
        return ['NULL', '""']
    if stars == 1 and base in HANDLES:
        return ['NULL']
    return ['NULL', f'(void *)scratch_at({{slot}})']


def main():
    headers, output = sys.argv[1:-1], sys.argv[-1]
    calls = []
    for path in headers:
        text = open(path, encoding='utf-8').read()
        for m in re.finditer(r'CUGL_API\s+([^;{(]*?)\b(cugl_\w+)\s*\(([^)]*)\)', text, re.S):
            ret, name, params = ' '.join(m.group(1).split()), m.group(2), split_params(m.group(3))
            if '...' in params:
                continue
            vals = [values(p) for p in params]
            if any(v is None for v in vals):
                vals = [v if v is not None else ['NULL'] for v in vals]
            status = ret == 'cugl_status'
            # Objects a successful call hands out, released again.
            cleanup = []
            for i, prm in enumerate(params):
                mm = re.match(r'(cugl_\w+)\s*\*\*\s*\w+$', prm.replace('const ', ''))
                if mm and mm.group(1) in HANDLES and mm.group(1) != 'cugl_device':
                    t = mm.group(1)
                    cleanup.append((i, f'{t}_release(*({t} **)scratch_at({i}));'))
                elif re.match(r'struct DLManagedTensor\s*\*\*', prm):
                    cleanup.append((i, f'{{ struct DLManagedTensor *t = *(struct DLManagedTensor **)'
                                       f'scratch_at({i}); if (t && t->deleter) t->deleter(t); }}'))
            base = [v[0] for v in vals]
            # every pointer a scratch buffer at once: the checks past the first NULL
            allp = [v[1] if len(v) > 1 and 'scratch' in v[1] else v[0] for v in vals]
            variants = []
            for start in ([base, allp] if allp != base else [base]):
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
                calls.append((name, status, ', '.join(args), done))
    with open(output, 'w', encoding='utf-8') as f:
        f.write('/* Generated by tests/unit/bad_input_gen.py from the public headers. */\n')
        f.write('#include "bad_input.h"\n\n')
        for i, (name, status, args, done) in enumerate(calls):
            if status:
                body = f'cugl_status st = {name}({args});'
                if done:
                    body += f' if (st == CUGL_OK) {{ {done} }}'
                body += ' return st;'
            else:
                body = f'(void){name}({args}); return CUGL_OK;'
            f.write(f'static cugl_status call_{i}(void)\n{{\n    {body}\n}}\n')
        f.write('\nconst bad_input_case bad_input_cases[] = {\n')
        for i, (name, status, args, done) in enumerate(calls):
            f.write(f'    {{"{name}", {"true" if status else "false"}, call_{i}, "{args}"}},\n')
        f.write('};\n')
        f.write(f'const size_t bad_input_count = {len(calls)};\n')


if __name__ == '__main__':
    main()
