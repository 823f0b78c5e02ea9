"""A viewer in a notebook cell (cugl/_viewer/notebook.py): the HTML a cell
gets (the last picture as a PNG, the script that puts the served page over
it, the notes), and the example notebook run headless by Debian's nbclient
and ipykernel, as `jupyter nbconvert --execute` would: its cells run, the
viewer's cell shows the live view and, once closed, its last picture. The
page itself in chromium: tests/browser/notebook_test.mjs."""
import base64
import ctypes
import os
import re

import numpy as np
import pytest

from cugl import _app_lib

from test_viewer import make_viewer

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def still_of(text):
    """The still picture's PNG bytes in a cell's HTML, or None."""
    m = re.search(r'src="data:image/png;base64,([^"]+)"', text)
    return base64.b64decode(m.group(1)) if m else None


def png_size(png):
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def png_pixels(png, tmp_path):
    """The PNG's RGBA rows top to bottom, read by libcugl-app's reader."""
    path = tmp_path / "still.png"
    path.write_bytes(png)
    app = _app_lib.load()
    rgba, w, h = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_int(), ctypes.c_int()
    read = app.cugl_app_read_png
    read.restype, read.argtypes = ctypes.c_int, [ctypes.c_void_p] * 3 + [ctypes.c_char_p]
    assert read(ctypes.byref(rgba), ctypes.byref(w), ctypes.byref(h), str(path).encode()) == 0
    try:
        return np.ctypeslib.as_array(rgba, (h.value, w.value, 4)).copy()
    finally:
        ctypes.CDLL(None).free(rgba)


def test_the_cells_html(tmp_path):
    with make_viewer(40, 24) as v:
        # Nothing presented yet: a dark box of the picture's proportions.
        html = v.notebook_html(live=False)
        assert still_of(html) is None and "aspect-ratio:40/24" in html
        assert "<script>" not in html and "the picture of frame 0" in html
        a = np.zeros((24, 40, 4), np.uint8)
        a[0] = (255, 0, 0, 255)  # the top row red (origin "upper")
        v.show(a)
        html = v.notebook_html()
        png = still_of(html)
        assert png_size(png) == (40, 24)
        if _app_lib.has("serve"):
            # Served now, on a port of its own; the script asks the page's
            # own host for it (the server is on 127.0.0.1).
            assert v.url is not None
            port = int(v.url.rsplit(":", 1)[1].strip("/"))
            assert ("http://\" + host + \":%d/?embed\"" % port) in html
            assert "var host = \"\" || location.hostname" in html
            assert "served at %s" % v.url in html
        else:
            assert "has no frame server" in html and "<script>" not in html
        # The still is the framebuffer: the top row red, the rest as drawn.
        assert np.array_equal(png_pixels(png, tmp_path), a)


def test_a_closed_viewer_says_so():
    v = make_viewer(40, 24)
    v.close()
    html = v.notebook_html()
    assert "cugl: cugl: closed" in html and "<script>" not in html and still_of(html) is None


def test_a_wide_still_is_scaled_down():
    with make_viewer(2000, 10) as v:
        v.show(np.full((10, 2000, 3), 90, np.uint8))
        png = still_of(v.notebook_html(live=False))
        assert png_size(png) == (667, 4)  # every third pixel: no more than 960 wide


def test_a_token_goes_into_the_pages_query():
    if not _app_lib.has("serve"):
        pytest.skip("this libcugl-app has no frame server")
    with make_viewer(40, 24, serve=0, token="s3cret") as v:
        v.show(np.zeros((24, 40, 3), np.uint8))
        assert '"&token=s3cret"' in v.notebook_html()


def test_a_title_cannot_end_the_script():
    if not _app_lib.has("serve"):
        pytest.skip("this libcugl-app has no frame server")
    with make_viewer(40, 24, title="</script><b>x") as v:
        html = v.notebook_html()
        assert html.count("</script>") == 1  # the script's own end alone
        assert "&lt;/script&gt;&lt;b&gt;x" in html  # the note, escaped as text


def run_notebook(path, frames):
    """The notebook at `path` run by nbclient (its FRAMES set to `frames`):
    the executed notebook; skipped where nbclient or ipykernel is not
    installed, or the kernel can make no headless viewer."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert re.search(r"^FRAMES = \d+", first.source, re.M)
    first.source = re.sub(r"^FRAMES = \d+", "FRAMES = %d" % frames, first.source, flags=re.M)
    # ipykernel's debugger warns of frozen modules on every start otherwise.
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": EXAMPLES}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        if "no EGL" in str(e):
            pytest.skip(str(e).splitlines()[-1])
        raise
    return nb


@pytest.mark.optional_package("nbclient")
def test_the_numpy_example_notebook_runs_headless():
    nb = run_notebook(os.path.join(EXAMPLES, "live_numpy.ipynb"), frames=40)
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # The viewer's cell: one display, brought up to date at close(): the
    # last picture alone, at the viewer's size.
    shown = [o for o in code[0].outputs if o.output_type == "display_data"]
    assert len(shown) == 1
    html = shown[0].data["text/html"]
    assert 'class="cugl-view"' in html and "closed; its last picture (frame 40)" in html
    assert "<script>" not in html
    assert png_size(still_of(html)) == (640, 400)
    printed = "".join(o.get("text", "") for o in code[1].outputs)
    assert printed.startswith("40 frames, field energy "), printed
    assert float(printed.split("field energy ")[1]) > 0  # the first drop spread
