"""The package's ctypes mirror of libcugl's and libcugl-app's C ABI against
the headers: every struct's size and field offsets as the compiler lays
them out, every enum value the package passes as the headers give it, and
every prototype's arity and types as the headers declare them."""
import ctypes
import os
import re
import subprocess

import pytest

from cugl import _app_lib, _lib
from cugl._app_structs import BY_C_NAME as APP_BY_C_NAME
from cugl._app_structs import ENUM_VALUES, OPTIONAL_HEADER
from cugl._structs import BY_C_NAME, DType

ROOT = os.environ["CUGL_SOURCE_ROOT"]
HEADERS = os.path.join(ROOT, "lib", "core", "include", "cugl")
APP_HEADERS = os.path.join(ROOT, "lib", "app", "include", "cugl")


def probe_layouts(env="CUGL_TEST_ABI_PROBE"):
    out = subprocess.run([os.environ[env]], capture_output=True, text=True, check=True,
                         timeout=60)
    return {key: int(value) for key, value in (line.split() for line in out.stdout.splitlines())}


def check_layout(cls, c_name, c):
    assert ctypes.sizeof(cls) == c[c_name]
    for field, _ in cls._fields_:
        assert getattr(cls, field).offset == c["%s.%s" % (c_name, field)], field


@pytest.mark.parametrize("c_name", sorted(BY_C_NAME))
def test_struct_layout_matches_the_header(c_name):
    check_layout(BY_C_NAME[c_name], c_name, probe_layouts())


def app_probe_or_skip(c_name):
    """The app probe's lines; skipped where `c_name` belongs to an optional
    part this build lacks (and the library lacks it too)."""
    c = probe_layouts("CUGL_TEST_APP_ABI_PROBE")
    if c_name not in c and c_name in OPTIONAL_HEADER:
        macro, header, part = OPTIONAL_HEADER[c_name]
        assert not _app_lib.has(part), "the library has the part, the headers not"
        pytest.skip("this build has no %s (%s is 0)" % (header, macro))
    return c


@pytest.mark.parametrize("c_name", sorted(APP_BY_C_NAME))
def test_app_struct_layout_matches_the_header(c_name):
    check_layout(APP_BY_C_NAME[c_name], c_name, app_probe_or_skip(c_name))


@pytest.mark.parametrize("c_name", sorted(ENUM_VALUES))
def test_app_enum_value_matches_the_header(c_name):
    assert ENUM_VALUES[c_name] == app_probe_or_skip(c_name)[c_name]


def declarations(directory=HEADERS):
    """{function name: (return type, [parameter types])} from the headers."""
    decls = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".h"):
            continue
        text = open(os.path.join(directory, name)).read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        # Preprocessor lines and attributes between a declaration's ")" and
        # ";" (printf-like functions' format checks).
        text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
        text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", text)
        for m in re.finditer(r"CUGL_API\s+([^;(]*?)\b(cugl_\w+)\s*\(([^)]*)\)\s*;", text):
            ret, fname, params = m.group(1), m.group(2), " ".join(m.group(3).split())
            types = [] if params in ("void", "") else [p.strip() for p in params.split(",")]
            decls[fname] = (ret.strip(), types)
    return decls


SCALARS = {
    "int": ctypes.c_int, "unsigned": ctypes.c_uint, "bool": ctypes.c_bool,
    "size_t": ctypes.c_size_t, "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64,
    "uint32_t": ctypes.c_uint32, "uint8_t": ctypes.c_uint8, "float": ctypes.c_float,
    "long": ctypes.c_long,
    # enums: int-sized
    "cugl_status": ctypes.c_int, "cugl_format": ctypes.c_int, "cugl_memory_kind": ctypes.c_int,
    "cugl_app_interop": ctypes.c_int, "cugl_app_origin": ctypes.c_int,
    "cugl_app_colormap": ctypes.c_int,
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
    if words in (["cugl_app_glproc"], ["cugl_app_message_callback"]):
        return "pointer"  # a function pointer typedef
    return SCALARS[" ".join(words)]


def is_pointer(ctype):
    return (ctype in (ctypes.c_void_p, ctypes.c_char_p) or
            (isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer)))


def check_prototype(decls, name, restype, argtypes):
    assert name in decls, "%s is not declared in the headers" % name
    ret, params = decls[name]
    if argtypes and argtypes[-1] == _app_lib.VARIADIC:
        assert params[-1] == "...", (name, params)
        params, argtypes = params[:-1], argtypes[:-1]
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


@pytest.mark.parametrize("name", sorted(_lib.PROTOTYPES))
def test_prototype_matches_the_header(name):
    check_prototype(declarations(), name, *_lib.PROTOTYPES[name])


@pytest.mark.parametrize("name", sorted(_app_lib.ALL_PROTOTYPES))
def test_app_prototype_matches_the_header(name):
    check_prototype(declarations(APP_HEADERS), name, *_app_lib.ALL_PROTOTYPES[name])
