// The live view in a notebook cell (python/cugl/_viewer/notebook.py), as a
// user has it: Debian's jupyter-notebook serving a notebook, opened in
// Debian's chromium (headless, puppeteer-core), its cells run from the
// notebook's own page. Two viewers displayed in two cells; a third cell's
// loop presents frames until the program gets a click on the first one's
// picture, which the test makes inside the cell's frame; the program says
// where the click landed. Checked: each cell's served page shows pictures
// (several viewers at once), the click reaches the program at the pixel
// clicked, the cell shows the still picture of the last frame after the
// loop and after close(), and the frames a second the page received.
//
// node notebook_test.mjs [--size WxH] [--seconds S] [--goal FPS] [--screenshot PNG]
// --size: the first viewer's size (320x240); --seconds: how long the page
// is watched for its frame rate before the click (2); --goal: the frames
// a second the page must receive (a benchmark's line, met or MISSED; the
// check fails below it); --screenshot: the
// notebook's page as it shows both live cells.
// The kernel's Python is the kernelspec's (python3), with the environment
// this script gets: CUGL_LIBRARY and PYTHONPATH name the build's cugl.
// Skipped (exit 77) where jupyter-notebook, chromium or puppeteer-core is
// missing, or where the kernel can make no headless viewer (no EGL).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

import { CHROMIUM, loadPuppeteer, skip, tapChecks } from "./browser_common.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const [W, H] = opt("--size", "320x240").split("x").map(Number);
const WATCH_S = Number(opt("--seconds", "2"));
const SCREENSHOT = opt("--screenshot", null);
const GOAL = Number(opt("--goal", "0"));

const JUPYTER = process.env.CUGL_JUPYTER_NOTEBOOK || "jupyter-notebook";
if (spawnSync(JUPYTER, ["--version"]).status !== 0)
  skip(`no ${JUPYTER} (Debian's jupyter-notebook; scripts/bootstrap.sh test installs it)`);
const puppeteer = await loadPuppeteer();

// The notebook: its cells as a user writes them.
const cells = [
  `import time, numpy as np, cugl
try:
    v = cugl.Viewer(${W}, ${H}, headless=True, title="first")
    w = cugl.Viewer(160, 120, headless=True, title="second")
except cugl.NotSupportedError as e:
    print("cugl-skip:", e)
    raise
ramp = np.linspace(0, 1, ${W}, dtype=np.float32)[None, :].repeat(${H}, 0)
v.show(ramp)
# The loop's pictures, made once: what is measured is the view, not NumPy.
pictures = [cugl.colormap((ramp + k / 16) % 1.0) for k in range(16)]
w.show(np.zeros((120, 160, 3), np.uint8) + 200)`,
  "v",
  "w",
  `clicked, cursor, frames, deadline = None, None, 0, time.monotonic() + 120
while clicked is None and time.monotonic() < deadline:
    v.show(pictures[frames % 16])
    w.show(np.full((120, 160, 3), frames % 256, np.uint8))
    frames += 1
    for e in v.events():
        if e.type == "move":
            cursor = (e.x, e.y)
        elif e.type == "button" and e.down and e.button == "left":
            clicked = cursor
print("cugl-clicked", clicked, frames)`,
  "v.close()",
];
const notebook = {
  nbformat: 4, nbformat_minor: 5, metadata: {
    kernelspec: { name: "python3", display_name: "Python 3", language: "python" } },
  cells: cells.map((source, i) => ({ cell_type: "code", id: `c${i}`, metadata: {},
                                      execution_count: null, outputs: [], source })),
};

const dir = mkdtempSync(join(tmpdir(), "cugl-notebook-"));
writeFileSync(join(dir, "live.ipynb"), JSON.stringify(notebook));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

const port = await freePort();
const token = randomBytes(16).toString("hex");
const jupyter = spawn(JUPYTER, [
  "--no-browser", "--allow-root", "--ip=127.0.0.1", `--port=${port}`, "--port-retries=0",
  `--NotebookApp.token=${token}`, `--notebook-dir=${dir}`,
], { env: { ...process.env, JUPYTER_RUNTIME_DIR: join(dir, "runtime"),
            JUPYTER_CONFIG_DIR: join(dir, "config"), PYDEVD_DISABLE_FILE_VALIDATION: "1" },
     stdio: ["ignore", "ignore", "pipe"] });
let jupyterLog = "";
jupyter.stderr.on("data", (d) => { jupyterLog += d; });

const { check, failures } = tapChecks();
let browser = null;
const base = `http://127.0.0.1:${port}`;

async function stop() {
  if (browser) await browser.close();
  browser = null;
  if (jupyter.exitCode === null) {
    jupyter.kill("SIGTERM");
    await new Promise((r) => { jupyter.on("exit", r); setTimeout(r, 5000); });
  }
  rmSync(dir, { recursive: true, force: true });
}

async function until(what, ms, body) {
  const end = Date.now() + ms;
  for (;;) {
    const got = await body();
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The cell's output HTML as the page has it, and its still picture's src.
const outputOf = (page, i) => page.evaluate((i) => {
  const cell = Jupyter.notebook.get_cell(i);
  const area = cell.output_area.element[0];
  const img = area.querySelector("img.cugl-still");
  const frame = area.querySelector("iframe.cugl-live");
  return { text: area.innerText, still: img ? img.src.slice(0, 22) : null,
           stillShown: img ? img.style.display !== "none" : false,
           live: frame ? frame.style.visibility === "visible" : false,
           hasFrame: Boolean(frame) };
}, i);

console.log("1..5");
let page = null;
await check("jupyter-notebook opens the notebook and runs its cells from its page", async () => {
  await until("jupyter-notebook to answer", 60000, async () => {
    try { return (await fetch(`${base}/api?token=${token}`)).ok; } catch { return false; }
  });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 1600 });
  await page.goto(`${base}/notebooks/live.ipynb?token=${token}`, { waitUntil: "load" });
  await until("the kernel", 60000, () => page.evaluate(() =>
    Boolean(window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel &&
            Jupyter.notebook.kernel.is_connected() &&
            Jupyter.notebook.kernel_selector)));
  await page.evaluate(() => Jupyter.notebook.execute_all_cells());

  // The first cell: viewers made (or the test skipped where none can be).
  const first = await until("the first cell's viewers", 60000, async () => {
    const o = await outputOf(page, 0);
    const v = await outputOf(page, 1);
    return o.text.includes("cugl-skip") || o.text.includes("Error") || v.hasFrame ? o : null;
  });
  if (first.text.includes("cugl-skip")) {
    await stop();
    skip(first.text.trim());
  }
  if (first.text.includes("Error")) throw new Error("the first cell failed: " + first.text);
});

try {
  if (!page) throw new Error("no notebook page");

  let pageFps = 0;
  await check("each viewer's cell shows its served page, with pictures (two at once)",
    async () => {
      for (const i of [1, 2]) {
        await until(`cell ${i}'s live view`, 30000, async () => (await outputOf(page, i)).live);
        const frame = await (await page.$(`#notebook .cell:nth-child(${i + 1}) iframe.cugl-live`))
          .contentFrame();
        await until(`cell ${i}'s pictures`, 30000, () =>
          frame.evaluate(() => window.cuglView.frames > 2));
      }
      const o = await outputOf(page, 1);
      if (o.stillShown) throw new Error("the still picture is still shown over the live one");
    });

  await check(`the page's frame rate (${W}x${H}, ${WATCH_S} s)`, async () => {
    const frame = await (await page.$("#notebook .cell:nth-child(2) iframe.cugl-live"))
      .contentFrame();
    // The mouse moves over the picture meanwhile, as a user's would: the
    // server's input-to-picture times (the page's header) are collected.
    const canvas = await frame.$("canvas");
    const box = await canvas.boundingBox();
    const before = await frame.evaluate(() => window.cuglView.frames);
    const inputMs = [];
    const end = Date.now() + WATCH_S * 1000;
    for (let i = 0; Date.now() < end; i++) {
      await page.mouse.move(box.x + box.width * (0.3 + 0.4 * ((i % 20) / 20)),
                            box.y + box.height * 0.6);
      await new Promise((r) => setTimeout(r, 50));
      const ms = await frame.evaluate(() => window.cuglView.header &&
                                            window.cuglView.header.input_ms);
      if (ms > 0) inputMs.push(ms);
    }
    const after = await frame.evaluate(() => window.cuglView.frames);
    pageFps = (after - before) / WATCH_S;
    if (SCREENSHOT) await page.screenshot({ path: SCREENSHOT });
    inputMs.sort((a, b) => a - b);
    const median = inputMs.length ? inputMs[inputMs.length >> 1] : -1;
    console.log(`# ${W}x${H} in a notebook cell: ${pageFps.toFixed(1)} frames/s received, ` +
                `input to picture median ${median.toFixed(0)} ms over ${inputMs.length} samples`);
    if (!(pageFps > 0)) throw new Error("no frames while the loop ran");
    if (GOAL) {
      console.log(`# goal: ${W}x${H} in a notebook cell at >= ${GOAL} frames/s received: ` +
                  `${pageFps.toFixed(1)}, ${pageFps >= GOAL ? "met" : "MISSED"}`);
      if (pageFps < GOAL) throw new Error(`${pageFps.toFixed(1)} frames/s, under ${GOAL}`);
    }
  });

  await check("a click on the cell's picture reaches the program at that pixel", async () => {
    const handle = await page.$("#notebook .cell:nth-child(2) iframe.cugl-live");
    const frame = await handle.contentFrame();
    const canvas = await frame.$("canvas");
    const box = await canvas.boundingBox();
    // A quarter across, half down: the program's pixel (W/4, H/2).
    await canvas.click({ offset: { x: box.width / 4, y: box.height / 2 } });
    const out = await until("the loop's cell to end", 60000, async () => {
      const o = await outputOf(page, 3);
      return o.text.includes("cugl-clicked") ? o.text : null;
    });
    const m = out.match(/cugl-clicked \(([\d.]+), ([\d.]+)\) (\d+)/);
    if (!m) throw new Error("the program got no click: " + out);
    const [x, y] = [Number(m[1]), Number(m[2])];
    if (Math.abs(x - W / 4) > 2 || Math.abs(y - H / 2) > 2)
      throw new Error(`clicked at (${W / 4}, ${H / 2}), the program got (${x}, ${y})`);
  });

  await check("after close() the cell holds the last picture alone", async () => {
    await until("close()", 30000, () => page.evaluate(() =>
      Jupyter.notebook.get_cell(4).get_text() && !Jupyter.notebook.kernel_busy &&
      Jupyter.notebook.get_cell(4).input_prompt_number !== null &&
      Jupyter.notebook.get_cell(4).input_prompt_number !== "*"));
    const o = await until("the cell's still", 30000, async () => {
      const got = await outputOf(page, 1);
      return !got.hasFrame ? got : null;
    });
    if (o.still !== "data:image/png;base64,")
      throw new Error("no still picture in the cell: " + JSON.stringify(o));
    if (!o.text.includes("closed; its last picture"))
      throw new Error("the note does not say closed: " + o.text);
  });
} catch (e) {
  console.log("# " + e.message);
}
if (failures())
  for (const line of jupyterLog.split("\n").slice(-30)) console.log("# jupyter: " + line);
await stop();
process.exit(failures() ? 1 : 0);
