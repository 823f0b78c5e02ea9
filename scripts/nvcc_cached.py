#!/usr/bin/env python3
"""nvcc, with its fatbins kept in a folder and reused where nothing changed.

usage: nvcc_cached.py NVCC ARGS... -MD -MF DEPFILE -o OUTPUT INPUT

Where CUGL_NVCC_CACHE names a folder, a fatbin is looked up there by a
digest of everything it is made from: nvcc's version, its arguments (less
the paths of the output and the depfile), and the path and bytes of every
file the source includes (as `nvcc -M` lists them). A hit copies the
fatbin and writes the depfile; a miss runs nvcc and keeps what it made.
The build trees of one machine (the plain, ASan and TSan builds and the
build-option combinations all compile the same kernels with the same
flags: only their host code differs) then compile each kernel once.
Without CUGL_NVCC_CACHE this is nvcc itself.
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def option_value(args, flag):
    return args[args.index(flag) + 1]


def without_paths(args):
    """The arguments less the output's and the depfile's paths (and the
    flags that name them), which differ from tree to tree."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ('-o', '-MF'):
            skip = True
            continue
        if a == '-MD':
            continue
        out.append(a)
    return out


def digest(nvcc, args):
    """The key of the fatbin these arguments make, and the files it is made of."""
    h = hashlib.sha256()
    h.update(subprocess.run([nvcc, '--version'], capture_output=True, check=True).stdout)
    plain = without_paths(args)
    h.update('\0'.join(plain).encode())
    deps = subprocess.run([nvcc] + plain + ['-M'], capture_output=True, text=True, check=True)
    files = deps.stdout.replace('\\\n', ' ').split(':', 1)[1].split()
    for f in files:
        h.update(b'\0' + os.path.abspath(f).encode() + b'\0')
        with open(f, 'rb') as data:
            h.update(hashlib.sha256(data.read()).digest())
    return h.hexdigest(), files


def main():
    nvcc, args = sys.argv[1], sys.argv[2:]
    cache = os.environ.get('CUGL_NVCC_CACHE')
    if not cache:
        os.execv(nvcc, [nvcc] + args)
    output, depfile = option_value(args, '-o'), option_value(args, '-MF')
    key, files = digest(nvcc, args)
    os.makedirs(cache, exist_ok=True)
    kept = os.path.join(cache, key + '.fatbin')
    if os.path.exists(kept):
        shutil.copyfile(kept, output)
        with open(depfile, 'w') as f:
            f.write(output.replace(' ', '\\ ') + ': ' +
                    ' '.join(p.replace(' ', '\\ ') for p in files) + '\n')
        return 0
    rc = subprocess.run([nvcc] + args).returncode
    if rc == 0:
        fd, tmp = tempfile.mkstemp(dir=cache)
        os.close(fd)
        shutil.copyfile(output, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, kept)  # whole, or not there: builds beside this one read it
    return rc


if __name__ == '__main__':
    sys.exit(main())
