"""The live part: a Viewer shows what Python computes, in a window, headless
or in a web browser, over libcugl-app's contexts and targets (what CUDA
writes and GL shows, on whichever interop path works here).

    import cugl, torch
    v = cugl.Viewer(1920, 1080, serve=8080)
    while not v.should_close:
        with v.frame() as img:                      # GL's own memory, no copy
            torch.from_dlpack(img).random_(0, 256)  # leaving the block presents

Every call is a call into libcugl-app through ctypes.CDLL, which releases
the GIL for its duration: no Python lock is held while a frame waits for
the GPU. A viewer is used by the thread that made it (its GL context is
current there).

One module a subject: viewer (the Viewer: its context, devices, targets,
presenting, reading back, lifetime), context (what a viewer holds, freed
once), images (show() and the colour map), points, mesh (mesh()), frame (frame()), input
(Input, InputEvent), panel, serving, recording (record(), Recording),
notebook (the live view in a Jupyter cell), interrupt (Ctrl-C while a
viewer presents), and drawing (the drawers a present calls).
"""
from .images import colormap, colormap_table
from .input import Input, InputEvent
from .viewer import Viewer, app_library_path

__all__ = ["Input", "InputEvent", "Viewer", "app_library_path", "colormap", "colormap_table"]
