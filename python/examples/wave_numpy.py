#!/usr/bin/env python3
"""A 2-D wave field computed with NumPy on the CPU and drawn live: hold the
left mouse button to push the water under the cursor. No GPU needed (the
viewer takes host memory on any GL); wave_torch.py is the same on a GPU.

    python3 wave_numpy.py                      # a window where there is a display
    python3 wave_numpy.py --headless --serve 8080   # open the printed URL

Options: --size WxH (the window), --grid WxH (the field), --frames N (stop
after N), --headless, --serve PORT, --poke X,Y (hold the button down at
pixel X,Y for the first half of the run, as if the mouse did: for runs
without one).
"""
import argparse
import sys
import time

import numpy as np

import cugl


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="960x640", help="window size WxH")
    p.add_argument("--grid", default=None, help="field size WxH (default: the window's / 2)")
    p.add_argument("--frames", type=int, default=0, help="frames to run (0: until closed)")
    p.add_argument("--headless", action="store_true", help="no window, even with a display")
    p.add_argument("--serve", type=int, default=None, metavar="PORT",
                   help="serve the frames to web browsers on PORT (0: any)")
    p.add_argument("--poke", default=None, metavar="X,Y",
                   help="hold the left button at pixel X,Y for the first half of the run")
    a = p.parse_args()
    a.width, a.height = (int(v) for v in a.size.split("x"))
    a.grid = tuple(int(v) for v in a.grid.split("x")) if a.grid else (a.width // 2,
                                                                       a.height // 2)
    return a


def step(u, u_prev, damping=0.998, c2=0.2):
    """One step of the damped wave equation on a fixed-edge grid."""
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] -
                       4 * u[1:-1, 1:-1])
    return (2 * u - u_prev + c2 * lap) * damping, u


def main():
    a = parse_args()
    gw, gh = a.grid
    u = np.zeros((gh, gw), np.float32)
    u_prev = u.copy()
    yy, xx = np.mgrid[0:gh, 0:gw]
    viewer = cugl.Viewer(a.width, a.height, headless=True if a.headless else None,
                         serve=a.serve, title="wave (NumPy)")
    if a.poke:
        x, y = a.poke.split(",")
        viewer.push_event("move %s %s" % (x, y))
        viewer.push_event("button left down")
    pressed, cursor = False, (0.0, 0.0)
    frames, start = 0, time.perf_counter()
    with viewer:
        while not viewer.should_close and (a.frames == 0 or frames < a.frames):
            for e in viewer.events():
                if e.type == "move":
                    cursor = (e.x, e.y)
                elif e.type == "button" and e.button == "left":
                    pressed = e.down
            if pressed:
                # The cursor in field cells: pixels from the top left, as the
                # field's rows are drawn (row 0 at the top: show()'s default).
                w, h = viewer.size
                cx, cy = cursor[0] * gw / w, cursor[1] * gh / h
                u += 0.5 * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 8.0, dtype=np.float32)
            u, u_prev = step(u, u_prev)
            viewer.show(u, vmin=-1.0, vmax=1.0)  # one channel: drawn through the colour map
            frames += 1
            if a.poke and frames == a.frames // 2:
                viewer.push_event("button left up")
        ms = (time.perf_counter() - start) * 1000 / max(frames, 1)
        print("wave_numpy: %d frames, %.2f ms a frame, field energy %.3f (interop %s: %s)"
              % (frames, ms, float((u * u).sum()), viewer.interop, viewer.reason))
    return 0


if __name__ == "__main__":
    sys.exit(main())
