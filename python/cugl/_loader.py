"""Finding and loading one of cugl's C libraries: what libcugl (_lib) and
libcugl-app (_app_lib) look for the same way. Pure Python; loads nothing
until load_first is called."""
import ctypes
import ctypes.util
import os
import subprocess


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


def installed_candidates(name, soname, find):
    """The installed lib`name`'s candidates, (where, path or None, why it
    was skipped): pkg-config's libdir of the package `name` (searched with
    `find`), then the system's search (ctypes.util.find_library, the
    dynamic loader's for `soname`)."""
    libdir, why = pkg_config_libdir(name)
    if libdir:
        path = find(libdir)
        yield ("pkg-config %s (libdir %s)" % (name, libdir), path,
               None if path else "no lib%s.so in %s" % (name, libdir))
    else:
        yield ("pkg-config %s" % name, None, why)
    found = ctypes.util.find_library(name)
    yield ("ctypes.util.find_library('%s')" % name, found, None if found else "found nothing")
    yield ("the dynamic loader's search for %s" % soname, soname, None)


def load_first(candidates, env, declare):
    """Load the first candidate that loads: (cdll, path, what declare(cdll)
    returned, tried), or (None, None, None, tried), `tried` saying why each
    was passed over. A path named by `env` that fails ends the search."""
    tried = []
    for where, path, skipped in candidates:
        if skipped:
            tried.append("%s: %s" % (where, skipped))
            continue
        try:
            cdll = ctypes.CDLL(path)
            declared = declare(cdll)
        except OSError as e:
            tried.append("%s: %s: %s" % (where, path, e))
            if where.startswith(env + "="):
                break
            continue
        return cdll, path, declared, tried
    return None, None, None, tried


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
