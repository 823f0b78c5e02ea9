#!/usr/bin/env python3
"""Gray-Scott reaction-diffusion computed with CuPy on the GPU and shown
live with Viewer.show() (one copy on the GPU, coloured by the viewer's
colour map). Hold the left mouse button, in the window or in the browser,
to seed the reaction under the cursor.

    python3 gray_scott_cupy.py                           # a window where there is a display
    python3 gray_scott_cupy.py --headless --serve 8080   # open the printed URL

Options: --size WxH (the window), --grid WxH (the field; default the
window's / 2), --frames N, --headless, --serve PORT, --interop, --device N,
--poke X,Y (hold the button down at pixel X,Y for the first half of the run).
"""
import argparse
import sys
import time

import cugl

try:
    import cupy as cp
except ImportError:
    sys.exit("gray_scott_cupy.py: needs CuPy (https://cupy.dev)")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1024x768", help="window size WxH")
    p.add_argument("--grid", default=None, help="field size WxH (default: the window's / 2)")
    p.add_argument("--frames", type=int, default=0, help="frames to run (0: until closed)")
    p.add_argument("--headless", action="store_true", help="no window, even with a display")
    p.add_argument("--serve", type=int, default=None, metavar="PORT",
                   help="serve the frames to web browsers on PORT (0: any)")
    p.add_argument("--interop", default="auto", choices=["auto", "map", "shared", "host"])
    p.add_argument("--device", type=int, default=None, help="the CUDA device (default 0)")
    p.add_argument("--poke", default=None, metavar="X,Y",
                   help="hold the left button at pixel X,Y for the first half of the run")
    a = p.parse_args()
    a.width, a.height = (int(v) for v in a.size.split("x"))
    a.grid = tuple(int(v) for v in a.grid.split("x")) if a.grid else (a.width // 2,
                                                                       a.height // 2)
    return a


def laplacian(f):
    return (cp.roll(f, 1, 0) + cp.roll(f, -1, 0) + cp.roll(f, 1, 1) + cp.roll(f, -1, 1) -
            4 * f)


def main():
    a = parse_args()
    viewer = cugl.Viewer(a.width, a.height, headless=True if a.headless else None,
                         serve=a.serve, title="Gray-Scott (CuPy)", interop=a.interop,
                         device=a.device)
    if viewer.device is None:
        sys.exit("gray_scott_cupy.py: the viewer has no CUDA device (%s)" % viewer.reason)
    gw, gh = a.grid
    du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065
    with cp.cuda.Device(viewer.device.device_id):
        u = cp.ones((gh, gw), cp.float32)
        v = cp.zeros((gh, gw), cp.float32)
        yy, xx = cp.mgrid[0:gh, 0:gw].astype(cp.float32)
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
                    w, h = viewer.size
                    cx, cy = cursor[0] * gw / w, cursor[1] * gh / h  # row 0 at the top, as shown
                    disc = (xx - cx) ** 2 + (yy - cy) ** 2 < 25.0
                    u[disc], v[disc] = 0.5, 0.25
                for _ in range(8):
                    uvv = u * v * v
                    u += du * laplacian(u) - uvv + feed * (1 - u)
                    v += dv * laplacian(v) + uvv - (feed + kill) * v
                viewer.show(v, vmin=0.0, vmax=0.4)  # device memory, one channel: one copy
                frames += 1
                if a.poke and frames == a.frames // 2:
                    viewer.push_event("button left up")
            cp.cuda.Device().synchronize()
            ms = (time.perf_counter() - start) * 1000 / max(frames, 1)
            print("gray_scott_cupy: %d frames, %.2f ms a frame, reactant %.3f (interop %s: %s)"
                  % (frames, ms, float(v.sum()), viewer.interop, viewer.reason))
    return 0


if __name__ == "__main__":
    sys.exit(main())
