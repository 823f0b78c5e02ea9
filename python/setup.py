"""Installs the cugl Python package: pure Python over libcugl, no compiler.

    CUGL_LIBRARY=<build>/lib/core/libcugl.so pip install ./python

names the libcugl the installed package uses (a file, a directory holding
it, or a Meson build directory): it is written into the package as
cugl/_install_config.py. Without CUGL_LIBRARY the package looks for an
installed libcugl (pkg-config cugl, then the system's search); at run time
CUGL_LIBRARY overrides either.

There is deliberately no pyproject.toml: with Debian 12's pip (23.0) and
setuptools and wheel importable, pip then builds with them in place, so the
install works offline; a pyproject.toml would make pip fetch setuptools
into an isolated build environment. Newer pips (25.3 on) always isolate:
give them --no-build-isolation.
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cugl._lib import ENV, _in_directory  # noqa: E402  (pure Python; loads nothing)
from cugl._version import __version__  # noqa: E402


def _library_named():
    named = os.environ.get(ENV)
    if not named:
        return None
    path = _in_directory(named) if os.path.isdir(named) else named
    if not path or not os.path.isfile(path):
        sys.exit("setup.py: %s=%s names no libcugl (a file, a directory holding "
                 "libcugl.so, or a Meson build directory)" % (ENV, named))
    return os.path.abspath(path)


class BuildPyWithLibrary(build_py):
    """build_py, then cugl/_install_config.py naming the library to use."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "cugl", "_install_config.py")
        with open(target, "w") as f:
            f.write('"""Written by setup.py at install time."""\n')
            f.write("LIBRARY = %r\n" % (_library_named(),))


with open(os.path.join(HERE, "README.md")) as f:
    long_description = f.read()

setup(
    name="cugl",
    version=__version__,
    description="CUDA and OpenGL sharing memory without copies: cugl's core from Python",
    long_description=long_description,
    long_description_content_type="text/markdown",
    license="MIT",
    packages=["cugl", "cugl._viewer"],
    python_requires=">=3.9",
    cmdclass={"build_py": BuildPyWithLibrary},
)
