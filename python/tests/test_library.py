"""How the package finds libcugl, and what it says when it cannot."""
import ctypes.util
import os
import shutil
import subprocess
import sys

import pytest

import cugl

BUILD_LIBRARY = os.path.realpath(os.environ["CUGL_LIBRARY"])
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cugl.__file__)))


def run_child(code, **env_changes):
    """Run `code` in a child Python that imports this source tree's package,
    with the environment changed (a value of None removes the variable)."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_version_is_the_projects():
    assert cugl.__version__ == os.environ["CUGL_PROJECT_VERSION"]


def test_the_library_in_use_is_the_one_named():
    assert os.path.realpath(cugl.library_path()) == BUILD_LIBRARY
    assert cugl.live_objects() >= 0 and cugl.live_bytes() >= 0


@pytest.mark.parametrize("form", ["file", "directory", "build directory"])
def test_cugl_library_names_a_file_a_directory_or_a_build_directory(form):
    lib_dir = os.path.dirname(os.environ["CUGL_LIBRARY"])
    # A build directory keeps libcugl in lib/core/.
    value = {"file": os.environ["CUGL_LIBRARY"], "directory": lib_dir,
             "build directory": os.path.dirname(os.path.dirname(lib_dir))}[form]
    out = run_child("import cugl, os; print(os.path.realpath(cugl.library_path()))",
                    CUGL_LIBRARY=value)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == BUILD_LIBRARY


def test_importing_loads_nothing():
    out = run_child("import cugl, sys; from cugl import _lib; print(_lib._Loaded.cdll)",
                    CUGL_LIBRARY="/nonexistent/libcugl.so")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"


def test_a_wrong_cugl_library_is_an_error_that_says_so():
    out = run_child("""
import cugl
try:
    cugl.live_objects()
except cugl.LibraryNotFoundError as e:
    assert isinstance(e, OSError) and e.status is None
    print(e)
""", CUGL_LIBRARY="/nonexistent/libcugl.so")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "cannot load libcugl; tried, in order:"
    # Set explicitly, nothing else is tried.
    assert lines[1].startswith("  CUGL_LIBRARY=/nonexistent/libcugl.so: "
                               "/nonexistent/libcugl.so: ")
    assert not lines[2].startswith("  ")
    assert "CUGL_LIBRARY=<build>/lib/core/libcugl.so" in lines[2]


def test_not_a_libcugl_is_refused_with_what_it_lacks():
    out = run_child("""
import cugl
try:
    cugl.live_objects()
except cugl.LibraryNotFoundError as e:
    print(e)
""", CUGL_LIBRARY="libc.so.6")
    assert out.returncode == 0, out.stderr
    assert "CUGL_LIBRARY=libc.so.6: libc.so.6: it lacks cugl_status_name, " in out.stdout


@pytest.mark.skipif(not shutil.which("pkg-config"), reason="pkg-config is not installed")
def test_pkg_config_finds_an_installed_library(tmp_path):
    lib_dir = os.path.dirname(os.environ["CUGL_LIBRARY"])
    (tmp_path / "cugl.pc").write_text(
        "libdir=%s\nName: cugl\nDescription: test\nVersion: %s\nLibs: -L${libdir} -lcugl\n"
        % (lib_dir, cugl.__version__))
    out = run_child("import cugl, os; print(os.path.realpath(cugl.library_path()))",
                    CUGL_LIBRARY=None, PKG_CONFIG_LIBDIR=str(tmp_path),
                    PKG_CONFIG_PATH=None)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == BUILD_LIBRARY


def test_nothing_found_lists_every_place_tried(tmp_path):
    out = run_child("""
import cugl
try:
    print(cugl.library_path())
except cugl.LibraryNotFoundError as e:
    print(e)
""", CUGL_LIBRARY=None, PKG_CONFIG_LIBDIR=str(tmp_path), PKG_CONFIG_PATH=None,
                    LD_LIBRARY_PATH=None)
    assert out.returncode == 0, out.stderr
    if ctypes.util.find_library("cugl"):
        # libcugl is installed on this machine: the system's search finds it.
        assert "libcugl.so" in out.stdout
        return
    lines = out.stdout.splitlines()
    assert lines[0] == "cannot load libcugl; tried, in order:"
    assert lines[1] == "  CUGL_LIBRARY: not set"
    assert lines[2] == ("  the library named at install time: none was named (set "
                        "CUGL_LIBRARY when running pip install)")
    if shutil.which("pkg-config"):
        assert lines[3].startswith("  pkg-config cugl: pkg-config knows no package cugl")
    else:
        assert lines[3].startswith("  pkg-config cugl: pkg-config could not run (")
    assert lines[4] == "  ctypes.util.find_library('cugl'): found nothing"
    assert lines[5].startswith("  the dynamic loader's search for libcugl.so.0: libcugl.so.0: ")


def test_a_wrong_cugl_app_library_is_an_error_that_says_so(tmp_path):
    out = run_child("""
import cugl
for value in ("/nonexistent/libcugl-app.so", %r):
    import os
    os.environ["CUGL_APP_LIBRARY"] = value
    from cugl import _app_lib
    try:
        _app_lib.load()
    except cugl.LibraryNotFoundError as e:
        print(e)
""" % str(tmp_path), CUGL_APP_LIBRARY=None)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == ("cannot load libcugl-app (cugl's GL side, which the viewer needs); "
                        "tried, in order:")
    assert lines[1].startswith("  CUGL_APP_LIBRARY=/nonexistent/libcugl-app.so: "
                               "/nonexistent/libcugl-app.so: ")
    assert "CUGL_APP_LIBRARY=<build>/lib/app/libcugl-app.so" in lines[2]
    assert lines[4] == "  CUGL_APP_LIBRARY=%s: no libcugl-app.so in that directory" % tmp_path


@pytest.mark.parametrize("form", ["next to libcugl", "build directory"])
def test_cugl_app_library_is_found_in_a_build_directory(form):
    build_dir = os.path.dirname(os.path.dirname(os.path.dirname(BUILD_LIBRARY)))
    value = {"next to libcugl": None, "build directory": build_dir}[form]
    out = run_child("import cugl, os; print(os.path.realpath(cugl.app_library_path()))",
                    CUGL_APP_LIBRARY=value)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == os.path.realpath(
        os.path.join(build_dir, "lib", "app", "libcugl-app.so"))
