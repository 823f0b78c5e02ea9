#!/usr/bin/env python3
"""A 2-D wave field computed with PyTorch on the GPU and written straight
into the picture GL shows (Viewer.frame(): no copy of the picture on the
map and shared paths). Hold the left mouse button, in the window or in the
browser, to push the water under the cursor.

    python3 wave_torch.py                           # a window where there is a display
    python3 wave_torch.py --headless --serve 8080   # open the printed URL

Options: --size WxH (the window and the field), --frames N (stop after N),
--headless, --serve PORT, --interop auto|map|shared|host, --device N,
--show (draw with show() and the viewer's colour map instead of frame()),
--poke X,Y (hold the button down at pixel X,Y for the first half of the
run, as if the mouse did).
"""
import argparse
import sys
import time

import cugl

try:
    import torch
except ImportError:
    sys.exit("wave_torch.py: needs PyTorch with CUDA (https://pytorch.org)")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="1280x720", help="window and field size WxH")
    p.add_argument("--frames", type=int, default=0, help="frames to run (0: until closed)")
    p.add_argument("--headless", action="store_true", help="no window, even with a display")
    p.add_argument("--serve", type=int, default=None, metavar="PORT",
                   help="serve the frames to web browsers on PORT (0: any)")
    p.add_argument("--interop", default="auto", choices=["auto", "map", "shared", "host"])
    p.add_argument("--device", type=int, default=None, help="the CUDA device (default 0)")
    p.add_argument("--show", action="store_true", help="show() the field instead of frame()")
    p.add_argument("--poke", default=None, metavar="X,Y",
                   help="hold the left button at pixel X,Y for the first half of the run")
    a = p.parse_args()
    a.width, a.height = (int(v) for v in a.size.split("x"))
    return a


def step(u, u_prev, damping, c2=0.2):
    """One step of the damped wave equation on a fixed-edge grid."""
    lap = torch.zeros_like(u)
    lap[1:-1, 1:-1] = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] -
                       4 * u[1:-1, 1:-1])
    return (2 * u - u_prev + c2 * lap) * damping, u


def main():
    a = parse_args()
    if not torch.cuda.is_available():
        sys.exit("wave_torch.py: PyTorch sees no CUDA device")
    viewer = cugl.Viewer(a.width, a.height, headless=True if a.headless else None,
                         serve=a.serve, title="wave (PyTorch)", interop=a.interop,
                         device=a.device)
    if viewer.device is None:
        sys.exit("wave_torch.py: the viewer has no CUDA device (%s)" % viewer.reason)
    dev = torch.device("cuda", viewer.device.device_id)
    torch.cuda.set_device(dev)
    gh, gw = a.height, a.width
    u = torch.zeros(gh, gw, device=dev)
    u_prev = torch.zeros_like(u)
    yy, xx = torch.meshgrid(torch.arange(gh, device=dev, dtype=torch.float32),
                            torch.arange(gw, device=dev, dtype=torch.float32), indexing="ij")
    # The viewer's colour map, applied here with PyTorch (the same formula
    # show() uses): the field's -1 .. 1 over the 256 entries.
    lut = torch.tensor(cugl.colormap_table(), dtype=torch.uint8, device=dev)
    sample = {}
    if a.poke:
        x, y = a.poke.split(",")
        viewer.push_event("move %s %s" % (x, y))
        viewer.push_event("button left down")
    pressed, cursor = False, (0.0, 0.0)
    damping, paused = 0.998, False
    frames, start = 0, time.perf_counter()
    with viewer:
        while not viewer.should_close and (a.frames == 0 or frames < a.frames):
            if viewer.has_panel:  # the panel's widgets, where libcugl-app has them
                damping = viewer.slider("damping", damping, 0.95, 1.0)
                paused = viewer.checkbox("paused", paused)
                viewer.text("%d x %d, %s path" % (gw, gh, viewer.interop))
            for e in viewer.events():
                if e.type == "move":
                    cursor = (e.x, e.y)
                elif e.type == "button" and e.button == "left" and not viewer.panel_wants_mouse:
                    pressed = e.down
            if pressed:
                # The cursor in field cells: pixels from the top left, as the
                # field's rows are drawn (row 0 at the top: show()'s default).
                w, h = viewer.size
                cx, cy = cursor[0] * gw / w, cursor[1] * gh / h
                u += 0.5 * torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 8.0)
            if not paused:
                u, u_prev = step(u, u_prev, damping)
            if a.show:
                viewer.show(u, vmin=-1.0, vmax=1.0)  # one copy, coloured by the viewer
            else:
                with viewer.frame() as img:
                    out = torch.from_dlpack(img)  # (H, W, 4) uint8: GL's own memory
                    h, w = out.shape[:2]
                    if (h, w) not in sample:  # the window's pixels over the field's cells
                        # GL's rows run from the bottom: the field's row 0
                        # at the top, as show() draws it.
                        sample[(h, w)] = (((h - 1 - torch.arange(h, device=dev)) * gh) // h,
                                          (torch.arange(w, device=dev) * gw) // w)
                    rows, cols = sample[(h, w)]
                    t = ((u[rows][:, cols] + 1.0) * 0.5).clamp_(0.0, 1.0)
                    out.copy_(lut[(t * 255.0 + 0.5).long()])
            frames += 1
            if a.poke and frames == a.frames // 2:
                viewer.push_event("button left up")
        torch.cuda.synchronize()
        ms = (time.perf_counter() - start) * 1000 / max(frames, 1)
        print("wave_torch: %d frames, %.2f ms a frame, field energy %.3f (interop %s: %s)"
              % (frames, ms, float((u * u).sum()), viewer.interop, viewer.reason))
    return 0


if __name__ == "__main__":
    sys.exit(main())
