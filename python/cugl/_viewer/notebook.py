"""The live view in a notebook cell: a Viewer displayed in Jupyter
(`display(v)`, or `v` as a cell's last expression) is its frame server's
page in the cell, the stream, its adaptation and codecs the server's own,
and the mouse, wheel and keys over the picture coming back to the program
as events, as for any page the server serves.

What the cell holds is HTML: the last picture presented, as a PNG (what a
notebook shows where no script runs: saved and reopened, untrusted, or
with the kernel gone), and a script that opens the served page in a frame
over it once the page has a picture. The page is asked for at the host
the notebook's own page came from (`location.hostname`) and the server's
port: a notebook reached through `ssh -L 8888:localhost:8888` needs that
one more port forwarded (`-L PORT:localhost:PORT`, the port in the cell's
note and in `url`), and no server extension. A server bound to an address
of its own (`address=`) is asked for there.

At the end of each cell that presented new frames the cell's still picture
is brought up to date (the page reloads; the still shows until its first
picture), and close() leaves the last picture alone in the cell.
"""
import base64
import contextlib
import html
import io
import itertools
import json
import os
import tempfile
import urllib.parse
import threading
import weakref

from .. import _app_lib

# A still picture wider than this is saved at 1/2, 1/3, ... of its size.
STILL_MAX_WIDTH = 960

_ids = itertools.count(1)

_LOOPBACK = ("127.0.0.1", "::1", "localhost", "0.0.0.0", "::")

# The cell's script: the served page in a frame, shown over the still
# picture once it has one of its own; sized to the page's height.
_SCRIPT = """(function () {
  var box = document.getElementById(%(id)s);
  if (!box || box.dataset.cuglStarted) return;
  box.dataset.cuglStarted = "1";
  var host = %(host)s || location.hostname;
  if (host.indexOf(":") >= 0 && host.charAt(0) !== "[") host = "[" + host + "]";
  var src = "http://" + host + ":%(port)d/?embed" + %(query)s;
  var still = box.querySelector(".cugl-still"), note = box.querySelector(".cugl-note");
  var frame = document.createElement("iframe");
  frame.className = "cugl-live";
  frame.title = %(title)s;
  frame.src = src;
  frame.style.cssText = "border:0;width:100%%;height:0;display:block;visibility:hidden";
  box.insertBefore(frame, box.firstChild);
  window.addEventListener("message", function (e) {
    if (e.source !== frame.contentWindow || !e.data || !e.data.cugl) return;
    if (e.data.height) frame.style.height = e.data.height + "px";
    if (e.data.cugl === "picture") {
      frame.style.visibility = "visible";
      still.style.display = "none";
      note.textContent = "cugl: live from " + src.split("?")[0];
    } else if (e.data.cugl === "closed") {
      note.textContent = "cugl: the program's server has gone (the viewer closed or the " +
        "kernel stopped): its last picture stands";
    }
  });
})();"""


def _js(text):
    """`text` as a JavaScript string inside a <script> element (no "</" in it)."""
    return json.dumps(text).replace("<", "\\u003c")


class _Notebook:
    """Viewer's notebook display (_ipython_display_, notebook_html)."""

    def _ipython_display_(self):
        from IPython.display import HTML, display
        handle = display(HTML(self.notebook_html()), display_id=True)
        self._notebook_cells().append(handle)
        _follow_cells(self)

    def notebook_html(self, live=True, _closing=False):
        """The HTML a notebook cell shows for this viewer: its last picture
        (a PNG), and where `live` (and libcugl-app has the frame server) a
        script that puts the served page over it; serving starts here (any
        free port on 127.0.0.1, the URL not printed: the cell says it) where
        it had not."""
        res = self._res
        width, height = self.size if not res.freed else (0, 0)
        still, self._still_frame = self._still_png(), self._frame_number_or_none()
        box = "cugl-view-%d-%d" % (os.getpid(), next(_ids))
        parts = ['<div class="cugl-view" id="%s" style="max-width:%dpx">' % (box, width)]
        if still:
            parts.append('<img class="cugl-still" alt="%s: the last picture presented" '
                         'src="data:image/png;base64,%s" style="width:100%%;height:auto;'
                         'display:block">' % (html.escape(self._title),
                                              base64.b64encode(still).decode()))
        else:
            parts.append('<div class="cugl-still" style="width:100%%;aspect-ratio:%d/%d;'
                         'background:#111"></div>' % (max(width, 1), max(height, 1)))
        serving = live and not res.freed and _app_lib.has("serve")
        if serving and res.server is None:
            with contextlib.redirect_stdout(io.StringIO()):
                self.serve(0)
        frame = self._still_frame or 0
        if serving:
            note = ("cugl: %s, %d x %d, served at %s (the live view needs the kernel running; "
                    "through ssh, forward this port too)" % (self._title, width, height,
                                                             self.url))
        elif res.freed:
            note = "cugl: %s: closed" % self._title
        elif _closing:
            note = "cugl: %s, %d x %d: closed; its last picture (frame %d)" % (
                self._title, width, height, frame)
        elif not live:
            note = "cugl: %s, %d x %d: the picture of frame %d" % (self._title, width, height,
                                                                    frame)
        else:
            note = ("cugl: %s, %d x %d: this libcugl-app has no frame server (Meson feature "
                    "`serve`): the picture as of this cell" % (self._title, width, height))
        parts.append('<div class="cugl-note" style="font:12px monospace;color:#888;'
                     'padding:2px 0">%s</div>' % html.escape(note))
        if serving:
            app = _app_lib.load()
            bound = app.cugl_app_server_address(res.server, 0).decode()
            query = "&token=" + urllib.parse.quote(self._token, safe="") if self._token else ""
            parts.append("<script>%s</script>" % (_SCRIPT % {
                "id": _js(box),
                "host": _js("" if bound in _LOOPBACK else bound),
                "port": app.cugl_app_server_port(res.server),
                "query": _js(query),
                "title": _js("cugl: " + self._title),
            }))
        parts.append("</div>")
        return "".join(parts)

    def _notebook_cells(self):
        cells = self.__dict__.get("_cells")
        if cells is None:
            cells = self.__dict__["_cells"] = []
        return cells

    def _frame_number_or_none(self):
        return None if self._res.freed else self.frame_number

    def _still_png(self):
        """The framebuffer as PNG bytes (scaled down to STILL_MAX_WIDTH at
        most), or None: nothing presented yet, or the viewer closed."""
        if self._res.freed or self.frame_number == 0:
            return None
        pixels = self.read_pixels()
        if isinstance(pixels, bytes):  # no NumPy: the full picture
            width, height = self.size
            step = 1
        else:
            step = -(-pixels.shape[1] // STILL_MAX_WIDTH)
            pixels = pixels[::step, ::step].copy()
            height, width = pixels.shape[:2]
            pixels = pixels.tobytes()
        fd, path = tempfile.mkstemp(suffix=".png")
        os.close(fd)
        try:
            _app_lib.load().cugl_app_write_png(path.encode(), pixels, width, height)
            with open(path, "rb") as f:
                return f.read()
        finally:
            os.unlink(path)

    def _notebook_close(self):
        """close(): each cell showing this viewer keeps its last picture alone."""
        cells = self.__dict__.get("_cells")
        if not cells:
            return
        try:
            from IPython.display import HTML
            still = HTML(self.notebook_html(live=False, _closing=True))
            for handle in cells:
                handle.update(still)
        except Exception:  # the kernel's messaging gone (exit): nothing to update
            pass
        cells.clear()


def _follow_cells(viewer):
    """At the end of each cell run, the viewer's cells brought up to date
    where it presented since (IPython's post_run_cell); the hook goes with
    the viewer (held weakly)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or viewer.__dict__.get("_following"):
        return
    ref = weakref.ref(viewer)

    def after_cell(result=None):
        v = ref()
        if v is None or v.is_closed:
            shell.events.unregister("post_run_cell", after_cell)
            return
        if (threading.get_ident() != v._thread or v._in_turn or
                v._frame_number_or_none() == v._still_frame):
            return
        from IPython.display import HTML
        fresh = HTML(v.notebook_html())
        for handle in v._notebook_cells():
            handle.update(fresh)

    shell.events.register("post_run_cell", after_cell)
    viewer.__dict__["_following"] = True
