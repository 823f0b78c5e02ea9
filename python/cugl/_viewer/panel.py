"""The panel: Dear ImGui's widgets drawn over the picture (where
libcugl-app was built with the Meson feature `ui`)."""
import time
from ctypes import byref, c_bool, c_char_p, c_float, c_int, c_void_p

from .. import _app_lib
from .. import _errors


class _Panel:
    """Viewer's panel: has_panel, slider, checkbox, combo, text, panel_wants_mouse."""

    @property
    def has_panel(self):
        """Whether this libcugl-app has the panel (Dear ImGui)."""
        return _app_lib.has("ui")

    def _panel(self, who):
        self._enter(who)
        if not _app_lib.has("ui"):
            raise _errors.NotSupportedError(
                "Viewer.%s: this libcugl-app was built without the panel (Meson feature `ui`: "
                "Debian's libimgui-dev and a C++ compiler)" % who)
        app = _app_lib.load()
        res = self._res
        if res.ui is None:
            out = c_void_p()
            app.cugl_app_ui_create(byref(out), res.ctx)
            res.ui = out.value
        if not self._ui_open:
            now = time.perf_counter()
            dt = now - self._last_frame_time if self._last_frame_time else 0.0
            app.cugl_app_ui_begin(res.ui, dt, self._title.encode())
            self._ui_open = True
        return res.ui

    def slider(self, label, value, lo, hi):
        """A slider in the panel from lo to hi; returns its value (float,
        or int where value, lo and hi are all ints)."""
        ui = self._panel("slider")
        if all(isinstance(v, int) and not isinstance(v, bool) for v in (value, lo, hi)):
            v = c_int(value)
            _app_lib.load().cugl_app_ui_slider_int(ui, str(label).encode(), byref(v), lo, hi)
        else:
            v = c_float(value)
            _app_lib.load().cugl_app_ui_slider_float(ui, str(label).encode(), byref(v),
                                                     float(lo), float(hi))
        return v.value

    def checkbox(self, label, value):
        """A checkbox in the panel; returns its state (a click flips it)."""
        ui = self._panel("checkbox")
        v = c_bool(value)
        _app_lib.load().cugl_app_ui_checkbox(ui, str(label).encode(), byref(v))
        return v.value

    def combo(self, label, index, items):
        """A drop-down list of `items` (strings); returns the chosen index."""
        ui = self._panel("combo")
        encoded = [str(i).encode() for i in items]
        arr = (c_char_p * max(len(encoded), 1))(*encoded)
        v = c_int(index)
        _app_lib.load().cugl_app_ui_combo(ui, str(label).encode(), byref(v), arr, len(encoded))
        return v.value

    def text(self, text):
        """A line of text in the panel."""
        ui = self._panel("text")
        _app_lib.load().cugl_app_ui_text(ui, b"%s", str(text).encode())

    @property
    def panel_wants_mouse(self):
        """The panel takes the mouse this frame (the cursor is over it, or a
        drag began on it): leave the mouse's events to it."""
        res = self._res
        if res.ui is None or not self._ui_open:
            return False
        return _app_lib.load().cugl_app_ui_wants_mouse(res.ui)
