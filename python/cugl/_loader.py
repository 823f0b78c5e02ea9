"""Finding and loading one of cugl's C libraries (libcugl for _lib,
libcugl-app for _app_lib): the one place that does it. Pure Python; loads
nothing until Library.load() is called.

A library is looked for, in this order:

1. its environment variable: a path to the library, a directory holding
   it, or a Meson build directory (the library in one of its build-dir
   subfolders); when it is set nothing else is tried, and a file it names
   that fails to load ends the search;
2. what the caller adds (`more`: libcugl's install-time choice,
   libcugl-app's place next to libcugl);
3. the installed library: pkg-config's libdir of its package, then the
   system's search (ctypes.util.find_library, the dynamic loader's for its
   soname).

The first that loads and that `declare` accepts (it raises OSError for a
file that is not the library) is kept for the process's lifetime.
"""
import ctypes
import ctypes.util
import os
import subprocess
import threading

from . import _errors


def in_directory(directory, names, subdirs):
    """The first of `names` (file names) in `directory` or one of its
    `subdirs` (in that order), or None."""
    for d in [directory] + [os.path.join(directory, s) for s in subdirs]:
        for name in names:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                return path
    return None


def pkg_config_libdir(package):
    """(pkg-config's libdir of `package`, None), or (None, why not)."""
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", package],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "pkg-config could not run (%s)" % e
    if out.returncode != 0:
        reason = out.stderr.strip().splitlines()
        return None, "pkg-config knows no package %s" % package + (
            " (%s)" % reason[0] if reason else "")
    return out.stdout.strip(), None


def mapped_file(stem, fallback):
    """The file the dynamic loader mapped whose name starts with `stem`
    (libcugl.so, libcugl-app.so), from /proc/self/maps; else `fallback`
    made absolute where it is a path."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6 and os.path.basename(fields[5].strip()).startswith(stem):
                    return fields[5].strip()
    except OSError:
        pass
    return os.path.abspath(fallback) if os.path.sep in fallback else fallback


class Library:
    """One of cugl's C libraries: where it is looked for and, once load()
    has found it, the ctypes.CDLL (cdll), the file (path) and what
    declare(cdll) returned (declared).

    names: its file names, the unversioned one (libcugl.so) first and the
        soname (libcugl.so.0) last;
    env: the environment variable that names it (CUGL_LIBRARY);
    subdirs: where a directory keeps it (a Meson build directory's
        lib/core/);
    package: its pkg-config package (cugl), also the name given to
        ctypes.util.find_library;
    declare: declare(cdll) sets the prototypes, raising OSError where the
        file is not the library;
    more: a callable giving further candidates, tried after the
        environment variable and before the installed library: (where,
        path or None, why it was skipped);
    title: how the error names it ("libcugl");
    advice: the error's last line, what to do.
    """

    def __init__(self, names, env, subdirs, package, declare, more=None, title=None,
                 advice=""):
        self.names, self.env, self.subdirs = tuple(names), env, tuple(subdirs)
        self.package = package
        self.file, self.soname = self.names[0], self.names[-1]
        self.declare, self.more = declare, more
        self.title = title or self.file[:-len(".so")]
        self.advice = advice
        self.lock = threading.Lock()
        self.cdll = self.path = self.declared = None

    def in_directory(self, directory):
        """The library in `directory` or one of its subdirs, or None."""
        return in_directory(directory, self.names, self.subdirs)

    def candidates(self):
        """(where, path or None, why it was skipped) in the order they are tried."""
        env = os.environ.get(self.env)
        if env:
            path = self.in_directory(env) if os.path.isdir(env) else env
            yield ("%s=%s" % (self.env, env), path,
                   None if path else "no %s in that directory" % self.file)
            return  # an explicit choice: nothing else is tried
        yield (self.env, None, "not set")
        if self.more is not None:
            yield from self.more()
        libdir, why = pkg_config_libdir(self.package)
        if libdir:
            path = self.in_directory(libdir)
            yield ("pkg-config %s (libdir %s)" % (self.package, libdir), path,
                   None if path else "no %s in %s" % (self.file, libdir))
        else:
            yield ("pkg-config %s" % self.package, None, why)
        name = self.file[len("lib"):-len(".so")]
        found = ctypes.util.find_library(name)
        yield ("ctypes.util.find_library('%s')" % name, found,
               None if found else "found nothing")
        yield ("the dynamic loader's search for %s" % self.soname, self.soname, None)

    def load(self):
        """The loaded library (a ctypes.CDLL with its prototypes), loading
        it once; LibraryNotFoundError, listing every place tried and why
        it was passed over, where none loads."""
        if self.cdll is not None:
            return self.cdll
        with self.lock:
            if self.cdll is not None:
                return self.cdll
            tried = []
            for where, path, skipped in self.candidates():
                if skipped:
                    tried.append("%s: %s" % (where, skipped))
                    continue
                try:
                    cdll = ctypes.CDLL(path)
                    declared = self.declare(cdll)
                except OSError as e:
                    tried.append("%s: %s: %s" % (where, path, e))
                    if where.startswith(self.env + "="):
                        break
                    continue
                self.path = mapped_file(self.file, path)
                self.declared = declared
                self.cdll = cdll  # last: a reader that sees it sees the rest
                return cdll
            raise _errors.LibraryNotFoundError(
                "cannot load %s; tried, in order:\n  " % self.title + "\n  ".join(tried) +
                "\n" + self.advice)
