"""The package's ctypes mirror of libcugl's C ABI against the headers: every
struct's size and field offsets as the compiler lays them out, and every
prototype's arity and types as the headers declare them."""
import ctypes
import os
import re
import subprocess

import pytest

from cugl import _lib
from cugl._structs import BY_C_NAME, DType

HEADERS = os.path.join(os.environ["CUGL_SOURCE_ROOT"], "lib", "include", "cugl")


def probe_layouts():
    out = subprocess.run([os.environ["CUGL_TEST_ABI_PROBE"]], capture_output=True, text=True,
                         check=True, timeout=60)
    return {key: int(value) for key, value in (line.split() for line in out.stdout.splitlines())}


@pytest.mark.parametrize("c_name", sorted(BY_C_NAME))
def test_struct_layout_matches_the_header(c_name):
    c = probe_layouts()
    cls = BY_C_NAME[c_name]
    assert ctypes.sizeof(cls) == c[c_name]
    for field, _ in cls._fields_:
        assert getattr(cls, field).offset == c["%s.%s" % (c_name, field)], field


def declarations():
    """{function name: (return type, [parameter types])} from the headers."""
    decls = {}
    for name in sorted(os.listdir(HEADERS)):
        text = open(os.path.join(HEADERS, name)).read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for m in re.finditer(r"CUGL_API\s+([^;(]*?)\b(cugl_\w+)\s*\(([^)]*)\)\s*;", text):
            ret, fname, params = m.group(1), m.group(2), " ".join(m.group(3).split())
            types = [] if params in ("void", "") else [p.strip() for p in params.split(",")]
            decls[fname] = (ret.strip(), types)
    return decls


SCALARS = {
    "int": ctypes.c_int, "unsigned": ctypes.c_uint, "bool": ctypes.c_bool,
    "size_t": ctypes.c_size_t, "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64,
    "uint32_t": ctypes.c_uint32, "float": ctypes.c_float,
    # enums: int-sized
    "cugl_status": ctypes.c_int, "cugl_format": ctypes.c_int, "cugl_memory_kind": ctypes.c_int,
    # by value
    "cugl_dtype": DType,
}


def c_type(decl, is_param):
    """What a declared C type must be in ctypes: a ctypes type, or "pointer"."""
    decl = decl.replace("const", " ").replace("struct", " ")
    if "*" in decl or "[" in decl:
        return "pointer"
    words = decl.split()
    if is_param and len(words) > 1:
        words = words[:-1]  # the parameter's name
    if words == ["void"]:
        return None
    return SCALARS[" ".join(words)]


def is_pointer(ctype):
    return (ctype in (ctypes.c_void_p, ctypes.c_char_p) or
            (isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer)))


@pytest.mark.parametrize("name", sorted(_lib.PROTOTYPES))
def test_prototype_matches_the_header(name):
    decls = declarations()
    assert name in decls, "%s is not declared in lib/include/cugl" % name
    ret, params = decls[name]
    restype, argtypes = _lib.PROTOTYPES[name]
    assert len(argtypes) == len(params), (params, argtypes)
    for decl, ctype in zip(params, argtypes):
        want = c_type(decl, True)
        if want == "pointer":
            assert is_pointer(ctype), (decl, ctype)
        else:
            assert ctype is want, (decl, ctype)
    want = c_type(ret, False)
    if restype == _lib.STATUS:
        assert ret == "cugl_status"
    elif want == "pointer":
        assert is_pointer(restype), (ret, restype)
    else:
        assert restype is want, (ret, restype)
