#!/usr/bin/env python3
"""Run the glad 2 generator and flatten its output for Meson.

usage: flatten.py GLAD OUTDIR WORKDIR --api APIS --extensions LIST

glad writes WORKDIR/include/{glad,KHR,EGL}/*.h and WORKDIR/src/*.c. Meson
wants a target's outputs in one directory, so glad/gl.h, glad/egl.h,
src/gl.c and src/egl.c are copied into OUTDIR (which is .../include/glad).
The KHR/ and EGL/ platform headers are copied next to it (OUTDIR/..), so
that the generated headers never depend on system EGL headers.
"""
import os
import shutil
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    glad, outdir, workdir = sys.argv[1:4]
    args = sys.argv[4:]
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    cmd = [glad, '--quiet', '--reproducible', *args, '--out-path', workdir, 'c', '--loader']
    try:
        subprocess.run(cmd, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print('flatten.py: the glad generator failed (%s). Install Debian\'s '
              'python3-glad (glad 2).' % e, file=sys.stderr)
        return 1
    inc, src = os.path.join(workdir, 'include'), os.path.join(workdir, 'src')
    for name in ('gl.h', 'egl.h'):
        shutil.copyfile(os.path.join(inc, 'glad', name), os.path.join(outdir, name))
    for name in ('gl.c', 'egl.c'):
        shutil.copyfile(os.path.join(src, name), os.path.join(outdir, name))
    parent = os.path.dirname(os.path.abspath(outdir))
    for sub in ('KHR', 'EGL'):
        if os.path.isdir(os.path.join(inc, sub)):
            shutil.copytree(os.path.join(inc, sub), os.path.join(parent, sub),
                            dirs_exist_ok=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
