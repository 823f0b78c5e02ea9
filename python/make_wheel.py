#!/usr/bin/env python3
"""Writes the cugl Python package as a wheel, with no build backend.

usage: make_wheel.py PACKAGE_DIR OUTPUT.whl [LIBRARY]
       make_wheel.py --list PACKAGE_DIR     (the package's sources, a line each)

PACKAGE_DIR is python/ (its cugl/ and cugl/_viewer/ are the package);
LIBRARY, where given, is the libcugl the installed package uses first (as
setup.py writes CUGL_LIBRARY into cugl/_install_config.py): the build
passes where `meson install` puts it. A wheel is a zip of the package and
its .dist-info (PEP 427); pip installs one without building anything, so
`pip install cugl-*.whl` works offline with any pip and any Python 3.9 or
later, where `pip install ./python` needs setuptools beside pip (a pip
that builds in isolation fetches it from the index). The files are written
in a fixed order with a fixed time: the same sources make the same bytes.
"""
import base64
import hashlib
import os
import re
import sys
import zipfile

# 1980-01-01, the earliest time a zip can hold: the wheel's bytes depend on
# its contents alone.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def package_files(package_dir):
    """(path in the wheel, bytes) of every .py of cugl and its subpackages."""
    files = []
    root = os.path.join(package_dir, "cugl")
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py") and name != "_install_config.py":
                path = os.path.join(here, name)
                with open(path, "rb") as f:
                    files.append((os.path.relpath(path, package_dir).replace(os.sep, "/"),
                                  f.read()))
    return files


def version_of(package_dir):
    with open(os.path.join(package_dir, "cugl", "_version.py")) as f:
        m = re.search(r'__version__ = "([^"]+)"', f.read())
    if not m:
        sys.exit("make_wheel.py: no __version__ in cugl/_version.py")
    return m.group(1)


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--list":
        for path, _ in package_files(sys.argv[2]):
            print(os.path.join(sys.argv[2], path))
        return
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[1])
    package_dir, out = sys.argv[1], sys.argv[2]
    library = sys.argv[3] if len(sys.argv) == 4 else None
    version = version_of(package_dir)
    with open(os.path.join(package_dir, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    info = "cugl-%s.dist-info" % version
    files = package_files(package_dir)
    files.append(("cugl/_install_config.py",
                  ('"""Written when the wheel was made (make_wheel.py)."""\nLIBRARY = %r\n'
                   % library).encode()))
    files.append((info + "/METADATA", (
        "Metadata-Version: 2.1\n"
        "Name: cugl\n"
        "Version: %s\n"
        "Summary: CUDA and OpenGL sharing memory without copies: cugl's core from Python\n"
        "License: MIT\n"
        "Requires-Python: >=3.9\n"
        "Description-Content-Type: text/markdown\n"
        "\n%s" % (version, readme)).encode("utf-8")))
    files.append((info + "/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: cugl make_wheel.py\n"
        "Root-Is-Purelib: true\n"
        "Tag: py3-none-any\n").encode()))
    files.append((info + "/top_level.txt", b"cugl\n"))
    record = "".join(record_line(p, d) + "\n" for p, d in files) + info + "/RECORD,,\n"
    files.append((info + "/RECORD", record.encode()))
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            entry = zipfile.ZipInfo(path, FIXED_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            z.writestr(entry, data)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
