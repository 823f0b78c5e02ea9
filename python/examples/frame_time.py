#!/usr/bin/env python3
"""The frame time of cugl.Viewer, headless at 1920x1080 (or --size), on each
interop path, beside the C example's (cugl-julia --bench) where its path is
given: a Markdown table with the GPU's name.

Each Python frame writes one byte plane of the picture with PyTorch (a
memset of W x H bytes, next to nothing) and presents:

  frame()  inside `with viewer.frame() as img`: torch.from_dlpack(img)
  show()   into a device tensor of (H, W, 4) uint8, then viewer.show(it)

and the time of each is taken on the CPU from one frame's start to the
next's, after 30 frames of warm-up; the table gives their medians (as the
C example's --bench gives its own) and the mean over the run, its last
frame waited for. The C example's frame includes its kernel (the Julia
set), which its --bench output gives as "CUDA" work: both are in the
table, and the C frame less its kernel, which is what the Python frame's
next-to-nothing write compares with.

usage: frame_time.py [--size WxH] [--frames N] [--paths map,shared,shared-pipelined,host]
                     [--device N] [--c-example PATH/TO/cugl-julia]
"""
import argparse
import re
import statistics
import subprocess
import sys
import time

import cugl

try:
    import torch
except ImportError:
    sys.exit("frame_time.py: needs PyTorch with CUDA (https://pytorch.org)")

WARMUP = 30


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--paths", default="map,shared,shared-pipelined,host")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--c-example", default=None, metavar="PATH",
                   help="the C example to run beside (cugl-julia, built in build/demos)")
    a = p.parse_args()
    a.width, a.height = (int(v) for v in a.size.split("x"))
    return a


def python_frames(a, path, mode):
    """(median ms, mean ms) of `a.frames` frames of `mode` on `path`."""
    interop, pipelined = path.split("-")[0], path.endswith("-pipelined")
    with cugl.Viewer(a.width, a.height, headless=True, interop=interop, pipelined=pipelined,
                     vsync=False, device=a.device) as v:
        torch.cuda.set_device(v.device.device_id)
        src = torch.zeros(a.height, a.width, 4, dtype=torch.uint8, device="cuda")
        times = []
        last = time.perf_counter()
        for i in range(WARMUP + a.frames):
            if mode == "frame":
                with v.frame() as img:
                    torch.from_dlpack(img)[..., 0].fill_(i & 255)
            else:
                src[..., 0].fill_(i & 255)
                v.show(src)
            now = time.perf_counter()
            times.append(now - last)
            last = now
            if i == WARMUP - 1:
                start = now
        v.stream.sync()
        torch.cuda.synchronize()
        mean = (time.perf_counter() - start) / a.frames
        return statistics.median(times[WARMUP:]) * 1000, mean * 1000


def c_frames(a, path):
    """(median frame ms, CUDA work ms) of the C example's --bench run, or None."""
    interop, pipelined = path.split("-")[0], path.endswith("-pipelined")
    command = [a.c_example, "--headless", "--bench", "--size", "%dx%d" % (a.width, a.height),
               "--frames", str(a.frames), "--interop", interop, "--device", str(a.device)]
    if pipelined:
        command.append("--pipelined")
    out = subprocess.run(command, capture_output=True, text=True, timeout=600)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        sys.exit("frame_time.py: %s failed:\n%s" % (" ".join(command), text))
    median = re.search(r"^frame: median ([0-9.]+) ms", text, re.M)
    work = re.search(r"^work \(GPU, medians\): .*CUDA ([0-9.]+) ms", text, re.M)
    if not median:
        sys.exit("frame_time.py: no 'frame: median' line in %s's output:\n%s"
                 % (a.c_example, text))
    return float(median.group(1)), float(work.group(1)) if work else None


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        sys.exit("frame_time.py: PyTorch sees no CUDA device")
    device = cugl.Device(a.device)
    print("# cugl.Viewer frame times, headless %dx%d, %d frames; GPU %d: %s"
          % (a.width, a.height, a.frames, a.device, device.name))
    print()
    print("| path | frame() ms median | frame() ms mean | show() ms median | show() ms mean |"
          " C example ms median | C kernel ms | C less kernel ms | frame() / C less kernel |")
    print("|---|---|---|---|---|---|---|---|---|")
    for path in a.paths.split(","):
        f_median, f_mean = python_frames(a, path, "frame")
        s_median, s_mean = python_frames(a, path, "show")
        c = c_frames(a, path) if a.c_example else None
        if c:
            c_median, c_kernel = c
            less = c_median - c_kernel if c_kernel is not None else None
            c_cells = "%.3f | %s | %s | %s" % (
                c_median, "%.3f" % c_kernel if c_kernel is not None else "?",
                "%.3f" % less if less is not None else "?",
                "%.2f" % (f_median / less) if less else "?")
        else:
            c_cells = "- | - | - | -"
        print("| %s | %.3f | %.3f | %.3f | %.3f | %s |"
              % (path, f_median, f_mean, s_median, s_mean, c_cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
