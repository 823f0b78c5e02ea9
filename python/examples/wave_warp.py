#!/usr/bin/env python3
"""A 2-D wave field stepped by Warp kernels that also colour it straight
into the picture GL shows (Viewer.frame(): no copy of the picture on the
map and shared paths). The kernels run on the viewer's own stream, so the
viewer's turn and Warp's work need no other ordering. Hold the left mouse
button, in the window or in the browser, to push the water under the cursor.

    python3 wave_warp.py                           # a window where there is a display
    python3 wave_warp.py --headless --serve 8080   # open the printed URL

Options: --size WxH (the window and the field), --frames N, --headless,
--serve PORT, --interop, --device N, --poke X,Y (hold the button down at
pixel X,Y for the first half of the run).
"""
import argparse
import sys
import time

import cugl

try:
    import warp as wp
except ImportError:
    sys.exit("wave_warp.py: needs NVIDIA Warp (pip install warp-lang)")


@wp.kernel
def step(u: wp.array2d(dtype=float), u_prev: wp.array2d(dtype=float),
         u_next: wp.array2d(dtype=float), cx: float, cy: float, push: float):
    i, j = wp.tid()
    h = u.shape[0]
    w = u.shape[1]
    value = float(0.0)
    if i > 0 and j > 0 and i < h - 1 and j < w - 1:
        lap = u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4.0 * u[i, j]
        dx = float(j) - cx
        dy = float(i) - cy
        value = (2.0 * u[i, j] - u_prev[i, j] + 0.2 * lap) * 0.998 + push * wp.exp(
            -(dx * dx + dy * dy) / 8.0)
    u_next[i, j] = value


@wp.kernel
def colour(u: wp.array2d(dtype=float), lut: wp.array2d(dtype=wp.uint8),
           img: wp.array3d(dtype=wp.uint8)):
    # The viewer's colour map over -1 .. 1 (its formula: int(t * 255 + 0.5)).
    i, j = wp.tid()
    t = wp.clamp((u[i * u.shape[0] // img.shape[0], j * u.shape[1] // img.shape[1]] + 1.0) * 0.5,
                 0.0, 1.0)
    k = int(t * 255.0 + 0.5)
    for c in range(4):
        img[i, j, c] = lut[k, c]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1280x720", help="window and field size WxH")
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
    return a


def main():
    a = parse_args()
    viewer = cugl.Viewer(a.width, a.height, headless=True if a.headless else None,
                         serve=a.serve, title="wave (Warp)", interop=a.interop, device=a.device)
    if viewer.device is None:
        sys.exit("wave_warp.py: the viewer has no CUDA device (%s)" % viewer.reason)
    wp.init()
    device = "cuda:%d" % viewer.device.device_id
    gh, gw = a.height, a.width
    fields = [wp.zeros((gh, gw), dtype=float, device=device) for _ in range(3)]
    lut = wp.array(cugl.colormap_table(), dtype=wp.uint8, device=device)
    if a.poke:
        x, y = a.poke.split(",")
        viewer.push_event("move %s %s" % (x, y))
        viewer.push_event("button left down")
    pressed, cursor = False, (0.0, 0.0)
    frames, start = 0, time.perf_counter()
    stream = wp.Stream(device, cuda_stream=viewer.stream.handle)  # the viewer's stream
    with viewer, wp.ScopedStream(stream):
        while not viewer.should_close and (a.frames == 0 or frames < a.frames):
            for e in viewer.events():
                if e.type == "move":
                    cursor = (e.x, e.y)
                elif e.type == "button" and e.button == "left":
                    pressed = e.down
            w, h = viewer.size
            cx, cy = cursor[0] * gw / w, (h - cursor[1]) * gh / h
            u_prev, u, u_next = fields
            wp.launch(step, dim=(gh, gw), inputs=[u, u_prev, u_next, cx, cy,
                                                  0.5 if pressed else 0.0])
            fields = [u, u_next, u_prev]
            with viewer.frame(stream=viewer.stream) as img:
                out = wp.from_dlpack(img)  # (H, W, 4) uint8: GL's own memory
                wp.launch(colour, dim=(out.shape[0], out.shape[1]), inputs=[u_next, lut, out])
            frames += 1
            if a.poke and frames == a.frames // 2:
                viewer.push_event("button left up")
        wp.synchronize_stream(stream)
        energy = float((fields[1].numpy() ** 2).sum())
        ms = (time.perf_counter() - start) * 1000 / max(frames, 1)
        print("wave_warp: %d frames, %.2f ms a frame, field energy %.3f (interop %s: %s)"
              % (frames, ms, energy, viewer.interop, viewer.reason))
    return 0


if __name__ == "__main__":
    sys.exit(main())
