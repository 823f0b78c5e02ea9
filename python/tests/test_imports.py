"""Every import in the package names a module that is there: a relative
import is resolved against the file's own package, so a module moved into a
subpackage (as the Viewer's were, into _viewer/) that still says `from ._x`
for a sibling of its old folder fails only when that line runs, which for
an import inside a function may be on the GPU alone."""
import ast
import os

import cugl

PACKAGE = os.path.dirname(os.path.abspath(cugl.__file__))


def modules():
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def target(path, node):
    """The file or folder a relative ImportFrom names, from the file's package."""
    base = os.path.dirname(path)
    for _ in range(node.level - 1):
        base = os.path.dirname(base)
    return os.path.join(base, *node.module.split(".")) if node.module else base


def exists(where):
    return os.path.isfile(where + ".py") or os.path.isfile(os.path.join(where, "__init__.py"))


def test_every_relative_import_names_a_module_that_exists():
    missing, seen = [], 0
    for path in modules():
        tree = ast.parse(open(path).read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            seen += 1
            where = target(path, node)
            if node.module is None:
                # from . import a, b: each a module of that package (or a name
                # its __init__ defines, which the import itself checks).
                names = [a.name for a in node.names]
                if all(exists(os.path.join(where, n)) for n in names) or exists(where):
                    continue
            elif exists(where):
                continue
            missing.append("%s:%d: %s%s" % (os.path.relpath(path, PACKAGE), node.lineno,
                                           "." * node.level, node.module or ""))
    assert seen > 50, "the walk found %d relative imports; is the package where it was?" % seen
    assert not missing, "imports of modules that are not there:\n" + "\n".join(missing)


def test_the_check_sees_a_wrong_import():
    """Its own check: the resolution finds a sibling and misses a wrong level."""
    frame = os.path.join(PACKAGE, "_viewer", "frame.py")
    good = ast.parse("from .._interop import default_stream").body[0]
    bad = ast.parse("from ._interop import default_stream").body[0]
    assert exists(target(frame, good))
    assert not exists(target(frame, bad))
