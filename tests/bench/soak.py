#!/usr/bin/env python3
"""Soak: each demo headless for many frames on each --interop path.

Every demo runs with --soak, which prints every SOAK_EVERY frames what the
process holds (resident host memory, malloc's heap, open files, the device's
used memory, cugl's live objects and bytes) and the median frame and a fresh
hand-over since the last line. A run is flat when:

  - the open files, and the objects and bytes the process holds through
    libcugl (cugl_live_objects, cugl_live_bytes), are the same from the
    first line to the last;
  - over the second half of the run (from the line at half its frames to
    the last), resident host memory grew by at most 4 MiB (80 bytes a frame
    over 50,000 frames; the resident size moves by a megabyte or two either
    way between lines as heaps grow and shrink) and the device's used memory
    by at most 2 MiB (the whole device's: run nothing else on it meanwhile);
    a leak grows all along, while heaps that settle grow early and stop;
  - the slowest window's median frame and hand-over are within 1.25x of the
    fastest window's.

The bytes malloc has handed out (mallinfo2: no page noise) are shown with
their growth a frame over the second half, and not judged: they grow by
about a byte a frame, and a trace of every block's owner
(tests/tools/heap_owners.so) found that growth in NVIDIA's GL library alone,
the blocks of libcugl and of the demos not changing by a byte.

Each run's host and device memory are printed line by line (lines starting
with '#') as it ends.

usage: soak.py CUGL_DEVICES CUGL_DEMO...
  environment: SOAK_FRAMES (default 100000), SOAK_EVERY (10000),
  SOAK_SIZE (256x256), SOAK_PATHS (map shared host), SOAK_BODIES (nbody's
  --bodies, 16384).
Exits 77 without a GPU, 1 when a run fails or is not flat.
"""
import os
import re
import subprocess
import sys
import time

LINE = re.compile(r"^soak: frame (\d+): host (-?\d+) KiB, heap (-?\d+) bytes, (-?\d+) files, "
                  r"device (-?[\d.]+) MiB used, cugl (-?\d+) objects (-?\d+) bytes, "
                  r"frame ([\d.]+) ms \(median of \d+\), hand-over (-?[\d.]+) ms$")
GROWTH_KIB = 4096
GROWTH_MIB = 2.0
TIME_SPREAD = 1.25


def spread(values):
    good = [v for v in values if v > 0]
    return max(good) / min(good) if good else float("inf")


def soak(demo, path, frames, every, size, bodies):
    cmd = [demo, "--headless", "--size", size, "--frames", str(frames), "--soak", str(every),
           "--interop", path]
    if os.path.basename(demo) == "cugl-nbody":
        cmd += ["--bodies", str(bodies)]
    start = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    samples = [tuple(float(g) for g in m.groups())
               for m in map(LINE.match, run.stdout.splitlines()) if m]
    if run.returncode != 0 or len(samples) != frames // every:
        sys.stderr.write(run.stdout + run.stderr)
        return None, "exit %d, %d of %d lines" % (run.returncode, len(samples),
                                                  frames // every), ""
    first, last = samples[0], samples[-1]
    half = samples[len(samples) // 2 - 1]
    problems = []
    for what, i in (("files", 3), ("cugl objects", 5), ("cugl bytes", 6)):
        if last[i] != first[i]:
            problems.append("%s %d -> %d" % (what, first[i], last[i]))
    heap_rate = (last[2] - half[2]) / (last[0] - half[0])
    if last[1] - half[1] > GROWTH_KIB:
        problems.append("host memory +%d KiB in the second half" % (last[1] - half[1]))
    if last[4] - half[4] > GROWTH_MIB:
        problems.append("device memory +%.1f MiB in the second half" % (last[4] - half[4]))
    for what, i in (("frame medians", 7), ("hand-overs", 8)):
        times = spread([s[i] for s in samples])
        if times > TIME_SPREAD:
            problems.append("%s spread %.2fx" % (what, times))
    row = "| %s | %s | %d | %.0f s | %d -> %d | %d -> %d (%+.2f/frame) | %d -> %d | " \
          "%.1f -> %.1f | %d -> %d, %d -> %d | %.3f -> %.3f (%.3f-%.3f) | " \
          "%.3f -> %.3f (%.3f-%.3f) | %s |" % (
              os.path.basename(demo).replace("cugl-", ""), path, frames, seconds,
              first[1], last[1], first[2], last[2], heap_rate, first[3], last[3], first[4],
              last[4], first[5], last[5], first[6], last[6],
              first[7], last[7], min(s[7] for s in samples), max(s[7] for s in samples),
              first[8], last[8], min(s[8] for s in samples), max(s[8] for s in samples),
              "flat" if not problems else "NOT FLAT: " + ", ".join(problems))
    series = "%s %s: host KiB %s; heap bytes %s; device MiB %s" % (
        os.path.basename(demo), path, " ".join("%d" % s[1] for s in samples),
        " ".join("%d" % s[2] for s in samples), " ".join("%.1f" % s[4] for s in samples))
    return row, problems, series


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    devices, demos = sys.argv[1], sys.argv[2:]
    probe = subprocess.run([devices], capture_output=True, text=True)
    if probe.returncode != 0 or "Device 0:" not in probe.stdout:
        print("soak: skipped: no CUDA device")
        sys.exit(77)
    print(next(l for l in probe.stdout.splitlines() if l.startswith("Device 0")))
    frames = int(os.environ.get("SOAK_FRAMES", "100000"))
    every = int(os.environ.get("SOAK_EVERY", "10000"))
    size = os.environ.get("SOAK_SIZE", "256x256")
    paths = os.environ.get("SOAK_PATHS", "map shared host").split()
    bodies = int(os.environ.get("SOAK_BODIES", "16384"))
    if frames < 2 * every:
        sys.exit("soak: SOAK_FRAMES must be at least twice SOAK_EVERY")
    print("\n%d frames at %s, a line every %d frames; first line -> last\n" % (frames, size, every))
    print("| demo | path | frames | wall | host KiB | heap bytes (second half) | files | "
          "device MiB used | cugl objects, bytes | frame ms (range) | hand-over ms (range) | |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for demo in demos:
        for path in paths:
            row, problems, series = soak(demo, path, frames, every, size, bodies)
            if series:
                print("# " + series)
            if row is None:
                print("| %s | %s | failed: %s |" % (os.path.basename(demo), path, problems))
                failed += 1
            else:
                print(row)
                failed += bool(problems)
            sys.stdout.flush()
    print("\nsoak: %d of %d runs flat" % (len(demos) * len(paths) - failed,
                                          len(demos) * len(paths)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
