"""`pip install ./python` into a fresh venv, offline (no package index), as
README.md says; the installed package imports and finds libcugl: the one
named at install time, pkg-config's, or CUGL_LIBRARY's at run time; and
libcugl-app next to it."""
import importlib.util
import os
import shutil
import site
import subprocess
import sys

import pytest

import cugl

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(cugl.__file__)))
BUILD_LIBRARY = os.path.realpath(os.environ["CUGL_LIBRARY"])
# A build directory's libraries: lib/core/libcugl.so, lib/app/libcugl-app.so.
BUILD_APP_LIBRARY = os.path.realpath(os.path.join(os.path.dirname(os.path.dirname(BUILD_LIBRARY)),
                                                  "app", "libcugl-app.so"))

PROBE = """
import os, numpy, cugl
print(os.path.dirname(cugl.__file__))
print(os.path.realpath(cugl.library_path()))
a = numpy.arange(12.0).reshape(3, 4)
b = numpy.from_dlpack(cugl.from_dlpack(a).T[1:])
assert b.ctypes.data == a.ctypes.data + 8 and (b == a.T[1:]).all()
del b  # the last holder of what cugl made
print(cugl.live_objects(), cugl.__version__)
print(os.path.realpath(cugl.app_library_path()))
assert str(cugl.InputEvent.parse("move 3 4")) == "0 move 3 4"  # a call into libcugl-app
"""


def clean_env(**changes):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CUGL_LIBRARY", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR",
                        "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("PIP_")}
    # The source tree's package must not be found; other paths (NumPy's) may stay.
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
             if p and os.path.realpath(p) != os.path.realpath(PACKAGE_DIR)]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    # No index and no local wheels: whatever the build needs must already be here.
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def run(args, cwd, env, timeout=300):
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    return out


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv that sees the system's packages (pip, setuptools, wheel,
    NumPy), and a copy of python/ to install from."""
    missing = [m for m in ("pip", "setuptools", "wheel") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip("an offline pip install needs pip, setuptools and wheel; %s lacks %s "
                    "(Debian: python3-pip python3-setuptools python3-wheel)"
                    % (sys.executable, ", ".join(missing)))
    root = tmp_path_factory.mktemp("install")
    src = root / "src"
    shutil.copytree(PACKAGE_DIR, src / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info",
                                                  "tests"))
    command = [sys.executable, "-m", "venv", "--system-site-packages", str(root / "venv")]
    if importlib.util.find_spec("ensurepip") is None:
        # No python3-venv: the venv runs the system's pip, installing into itself.
        command.append("--without-pip")
    out = run(command, root, clean_env())
    assert out.returncode == 0, "python3 -m venv failed:\n" + out.stderr
    if sys.prefix != sys.base_prefix:
        # The Python that runs the tests is itself a venv's: a venv made
        # from it sees the base interpreter's packages, not that venv's
        # (NumPy may be only there). A .pth file adds them.
        version = "python%d.%d" % sys.version_info[:2]
        site_dir = root / "venv" / "lib" / version / "site-packages"
        (site_dir / "parent-venv.pth").write_text(
            "".join(p + "\n" for p in site.getsitepackages()))
    return root


def pip_install(venv, **env):
    python = str(venv / "venv" / "bin" / "python")
    return run([python, "-m", "pip", "install", "--force-reinstall", "./python"],
               venv / "src", clean_env(**env))


def probe(venv, **env):
    python = str(venv / "venv" / "bin" / "python")
    out = run([python, "-c", PROBE], venv, clean_env(**env), timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.splitlines()


def test_install_names_the_build_tree(venv):
    # The build directory: libcugl is in its lib/core/.
    build_dir = os.path.dirname(os.path.dirname(os.path.dirname(BUILD_LIBRARY)))
    out = pip_install(venv, CUGL_LIBRARY=build_dir)
    assert out.returncode == 0, out.stdout + out.stderr
    where, library, counts, app_library = probe(venv)
    assert where.startswith(str(venv / "venv"))  # the installed copy, not the source
    assert library == BUILD_LIBRARY
    assert app_library == BUILD_APP_LIBRARY
    assert counts == "0 %s" % cugl.__version__
    # CUGL_LIBRARY at run time still overrides the recorded library.
    out = run([str(venv / "venv" / "bin" / "python"), "-c",
               "import cugl\ntry:\n    cugl.library_path()\nexcept cugl.LibraryNotFoundError "
               "as e:\n    print(e)"], venv, clean_env(CUGL_LIBRARY="/nonexistent/libcugl.so"))
    assert "CUGL_LIBRARY=/nonexistent/libcugl.so: " in out.stdout, out.stdout + out.stderr


def test_install_without_a_library_finds_the_installed_one(venv, tmp_path):
    out = pip_install(venv)
    assert out.returncode == 0, out.stdout + out.stderr
    (tmp_path / "cugl.pc").write_text(
        "libdir=%s\nName: cugl\nDescription: test\nVersion: %s\nLibs: -L${libdir} -lcugl\n"
        % (os.path.dirname(BUILD_LIBRARY), cugl.__version__))
    where, library, counts, app_library = probe(venv, PKG_CONFIG_LIBDIR=str(tmp_path))
    assert library == BUILD_LIBRARY
    assert app_library == BUILD_APP_LIBRARY


def test_install_refuses_a_library_that_is_not_there(venv):
    out = pip_install(venv, CUGL_LIBRARY="/nonexistent/libcugl.so")
    assert out.returncode != 0
    assert ("CUGL_LIBRARY=/nonexistent/libcugl.so names no libcugl" in out.stdout + out.stderr)


# --- the wheel the build makes (python/make_wheel.py) -------------------------

WHEEL = os.environ.get("CUGL_TEST_WHEEL")
WHEEL_LIBRARY = os.environ.get("CUGL_TEST_WHEEL_LIBRARY")
WHEEL_PROBE = """
import cugl, cugl._install_config as c
print(c.LIBRARY)
print(__import__("os").path.realpath(cugl.library_path()))
print(cugl.live_objects(), cugl.__version__)
"""


def pythons():
    """Every Python 3.9+ on PATH that makes venvs with pip (its own
    executable, once each), the one running these tests first: Debian's,
    and others such as pyenv's, whose pip may build nothing offline."""
    names = ["python3"] + ["python3.%d" % m for m in range(9, 20)]
    found, seen = [], set()
    for command in [sys.executable] + [shutil.which(n) for n in names]:
        if not command:
            continue
        out = run([command, "-c", "import ensurepip, os, sys, venv; print(os.path.realpath("
                   "sys.executable), sys.executable, sys.version_info >= (3, 9))"], "/",
                  clean_env(), timeout=60)
        words = out.stdout.split()
        if out.returncode == 0 and words[-1] == "True" and words[0] not in seen:
            seen.add(words[0])
            found.append(words[1])
    return found


def test_the_wheel_is_made_from_the_sources_the_same_each_time(tmp_path):
    if not WHEEL:
        pytest.skip("CUGL_TEST_WHEEL names no wheel (meson test sets it)")
    again = tmp_path / os.path.basename(WHEEL)
    make = os.path.join(PACKAGE_DIR, "make_wheel.py")
    out = run([sys.executable, make, PACKAGE_DIR, str(again), WHEEL_LIBRARY], tmp_path,
              clean_env())
    assert out.returncode == 0, out.stderr
    with open(WHEEL, "rb") as a, open(again, "rb") as b:
        assert a.read() == b.read(), "the build's wheel is not what its sources make"
    import zipfile
    with zipfile.ZipFile(WHEEL) as z:
        names = z.namelist()
        assert "cugl/__init__.py" in names and "cugl/_viewer/__init__.py" in names
        assert not [n for n in names if "__pycache__" in n or "/tests/" in n]
        record = z.read("cugl-%s.dist-info/RECORD" % cugl.__version__).decode()
        assert len(record.splitlines()) == len(names)


def test_the_wheel_installs_offline_with_any_pip(tmp_path):
    """pip install of the wheel into a fresh venv of each Python on PATH,
    with no index and nothing but the venv's own pip: no build, no
    setuptools; the installed package names the library `meson install`
    puts in libdir, and finds another by CUGL_LIBRARY or pkg-config."""
    if not WHEEL:
        pytest.skip("CUGL_TEST_WHEEL names no wheel (meson test sets it)")
    found = pythons()
    for k, python in enumerate(found):
        print("# %s" % python)
        installs_the_wheel(python, tmp_path / ("python%d" % k))
    if not found:
        # No Python here makes venvs with pip (Debian: python3-venv): this
        # one's pip installs the wheel into a folder of its own.
        target = tmp_path / "target"
        out = run([sys.executable, "-m", "pip", "install", "--target", str(target), WHEEL],
                  tmp_path, clean_env())
        assert out.returncode == 0, out.stdout + out.stderr
        out = run([sys.executable, "-c", WHEEL_PROBE], tmp_path,
                  clean_env(CUGL_LIBRARY=BUILD_LIBRARY, PYTHONPATH=str(target)), timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.splitlines() == [WHEEL_LIBRARY, BUILD_LIBRARY,
                                           "0 %s" % cugl.__version__]


def installs_the_wheel(python, tmp_path):
    tmp_path.mkdir()
    env = clean_env()
    out = run([python, "-m", "venv", str(tmp_path / "venv")], tmp_path, env)
    assert out.returncode == 0, out.stderr
    bin_dir = tmp_path / "venv" / "bin"
    out = run([str(bin_dir / "python"), "-m", "pip", "install", WHEEL], tmp_path, env)
    assert out.returncode == 0, "%s: %s%s" % (python, out.stdout, out.stderr)
    out = run([str(bin_dir / "python"), "-c", WHEEL_PROBE], tmp_path,
              clean_env(CUGL_LIBRARY=BUILD_LIBRARY), timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == [WHEEL_LIBRARY, BUILD_LIBRARY, "0 %s" % cugl.__version__]
    if os.path.exists(WHEEL_LIBRARY):
        return  # an installed cugl is what it finds without CUGL_LIBRARY
    (tmp_path / "cugl.pc").write_text(
        "libdir=%s\nName: cugl\nDescription: test\nVersion: %s\nLibs: -L${libdir} -lcugl\n"
        % (os.path.dirname(BUILD_LIBRARY), cugl.__version__))
    out = run([str(bin_dir / "python"), "-c", WHEEL_PROBE], tmp_path,
              clean_env(PKG_CONFIG_LIBDIR=str(tmp_path)), timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[1] == BUILD_LIBRARY
    # With neither, it says what it looked for, the recorded library first
    # (and not the loader's path to the build's, which meson test sets).
    env = clean_env(PKG_CONFIG_LIBDIR=str(tmp_path / "none"))
    env.pop("LD_LIBRARY_PATH", None)
    out = run([str(bin_dir / "python"), "-c", "import cugl; cugl.library_path()"], tmp_path,
              env, timeout=60)
    assert out.returncode != 0
    assert "the library named at install time" in out.stderr
    assert "%s does not exist" % WHEEL_LIBRARY in out.stderr
