"""The PyTorch example notebook (python/examples/live_torch.ipynb) run
headless by nbclient on the GPU: PyTorch writes the field into the
viewer's own memory (frame()) in a loop of the notebook's, and the cell
shows the viewer, then its last picture once closed."""
import os

import pytest

from test_notebook import EXAMPLES, png_size, run_notebook, still_of


@pytest.mark.optional_package("nbclient")
def test_the_torch_example_notebook_runs_on_the_gpu(torch):
    nb = run_notebook(os.path.join(EXAMPLES, "live_torch.ipynb"), frames=120)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    shown = [o for o in code[0].outputs if o.output_type == "display_data"]
    assert len(shown) == 1
    html = shown[0].data["text/html"]
    assert "closed; its last picture (frame 120)" in html
    assert png_size(still_of(html)) == (640, 360)  # 1280 x 720 at half: no more than 960 wide
    printed = "".join(o.get("text", "") for o in code[1].outputs)
    assert printed.startswith("120 frames, field energy "), printed
    assert float(printed.split("field energy ")[1]) > 0
