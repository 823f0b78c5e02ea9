// The browser suite: a program that serves its frames (tests/serve/serve_app,
// GL only, so Mesa runs it), seen in Debian's chromium, headless, driven by
// puppeteer-core. TAP on stdout:
//   1. the page loads and frames arrive on its canvas;
//   2. the canvas matches the program's own screenshot within JPEG's tolerance;
//   3. a drag in the page turns the program's camera, and the canvas changes;
//   4. a bad token is refused, for the page (403) and for its WebSocket;
//   5. the page shows what it gets (codec, frames a second, link, round
//      trip), and its full-window mode gives the picture the window.
// With --codec video the program sends VP8 (serve_app --codec video), which
// the page decodes with WebCodecs (the page is from 127.0.0.1: a secure
// context): the same checks, and the page must say it decoded VP8. With
// --encoder gpu its JPEGs are GL's compute shaders' (serve_app --encoder
// gpu; llvmpipe's where there is no GPU): restart markers, fill bytes.
// Exits 77 (skipped) without chromium or puppeteer-core (scripts/bootstrap.sh
// installs both).
//
// usage: node serve_page_test.mjs SERVE_APP [--codec video] [--encoder gpu]
//                                           [--page-screenshot FILE.png]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CHROMIUM = process.env.CUGL_CHROMIUM || "/usr/bin/chromium";
const TOKEN = "browser-Token.7";
const W = 320, H = 240;

const [app, ...rest] = process.argv.slice(2);
const option = (name) => { const i = rest.indexOf(name); return i >= 0 ? rest[i + 1] : null; };
const pageShot = option("--page-screenshot");
const codec = option("--codec") || "jpeg";
const encoder = option("--encoder") || "auto";
// Mean absolute difference of a channel, in levels: JPEG at quality 85, and
// VP8 (4:2:0 as well, its rate control's quantizer) a little more.
const JPEG_TOLERANCE = codec === "video" ? 8 : 6;

if (!app) {
  console.log("usage: node serve_page_test.mjs SERVE_APP [--page-screenshot FILE]");
  process.exit(99);
}
let puppeteer;
try {
  puppeteer = (await import("puppeteer-core")).default;
} catch {
  console.log("1..0 # SKIP puppeteer-core is not installed (npm ci in tests/browser)");
  process.exit(77);
}
if (!existsSync(CHROMIUM)) {
  console.log(`1..0 # SKIP no chromium at ${CHROMIUM}`);
  process.exit(77);
}

const dir = mkdtempSync(join(tmpdir(), "cugl-browser-"));
const shot = join(dir, "shot.png");
let output = "";
const child = spawn(app, ["--port", "0", "--token", TOKEN, "--size", `${W}x${H}`,
                          "--screenshot", shot, "--codec", codec, "--encoder", encoder],
                    { stdio: ["pipe", "pipe", "inherit"] });
child.stdout.on("data", (d) => { output += d.toString(); });
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));

async function until(what, test, seconds) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const v = await test();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const port = await until("the program to serve", () => {
  const m = /serving on http:\/\/[^:]+:(\d+)\//.exec(output);
  return m ? Number(m[1]) : 0;
}, 60).catch((e) => {
  if (/skipped/.test(output)) {
    console.log("1..0 # SKIP " + output.trim());
    process.exit(77);
  }
  throw e;
});
const base = `http://127.0.0.1:${port}/`;

console.log("1..5");
let failed = 0;
async function check(n, name, body) {
  try {
    await body();
    console.log(`ok ${n} - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    for (const line of String(e.stack || e).split("\n")) console.log("# " + line);
  }
}

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const page = await browser.newPage();
await page.setViewport({ width: 800, height: 600 });

// The canvas's pixels, and the PNG's decoded by the page.
const canvasPixels = () => page.evaluate(() => {
  const c = document.getElementById("view");
  return Array.from(c.getContext("2d").getImageData(0, 0, c.width, c.height).data);
});
const pngPixels = (path) => page.evaluate(async (url) => {
  const img = new Image();
  img.src = url;
  await img.decode();
  const c = document.createElement("canvas");
  c.width = img.width;
  c.height = img.height;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0);
  return Array.from(g.getImageData(0, 0, c.width, c.height).data);
}, "data:image/png;base64," + readFileSync(path).toString("base64"));
function meanDifference(a, b) {
  if (a.length !== b.length) throw new Error(`sizes differ: ${a.length} and ${b.length} bytes`);
  let sum = 0;
  for (let i = 0; i < a.length; i += 4)
    sum += Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);
  return sum / (a.length / 4 * 3);
}

await check(1, "the page loads and frames arrive", async () => {
  const res = await page.goto(base + "?token=" + TOKEN);
  if (res.status() !== 200) throw new Error(`the page answered ${res.status()}`);
  // A still picture is drawn once or twice, then comes as headers alone:
  // 3 messages, at least one of them a picture.
  await until("3 frames, a picture on the canvas", () => page.evaluate(
    () => window.cuglView.messages >= 3 && window.cuglView.frames >= 1), 30);
  const header = await page.evaluate(() => window.cuglView.header);
  if (header.width !== W || header.height !== H)
    throw new Error(`frames of ${header.width} x ${header.height}, not ${W} x ${H}`);
  const name = await page.$eval("#name", (e) => e.textContent);
  if (name !== "serve_app") throw new Error(`the page names the program '${name}'`);
  if (codec === "video") {
    await until("VP8 frames decoded by WebCodecs", () => page.evaluate(
      () => window.cuglView.video_frames >= 3), 30).catch(async (e) => {
      const v = await page.evaluate(() => ({ ...window.cuglView, header: null, link: null }));
      const why = await page.evaluate(() => window.cuglView.header && window.cuglView.header.codec_why);
      throw new Error(`${e.message}: ${JSON.stringify(v)}; the server says: ${why}`);
    });
    const line = await page.$eval("#link", (e) => e.textContent);
    if (!/VP8 video/.test(line)) throw new Error(`the page does not say VP8: '${line}'`);
    console.log(`# ${line}`);
  }
});

let before;
await check(2, "the canvas matches the program's screenshot", async () => {
  // The picture is still: whatever level the link first got, a frame of
  // the best one the link carries follows.
  const want = await pngPixels(shot);
  let diff = 0;
  await until("the canvas to match", async () => {
    before = await canvasPixels();
    diff = meanDifference(before, want);
    return diff <= JPEG_TOLERANCE;
  }, 10).catch(() => {});
  const h = await page.evaluate(() => window.cuglView.header);
  console.log(`# mean difference ${diff.toFixed(2)} levels (quality ${h.quality}, ` +
              `scale ${h.scale}, link ${(h.throughput / 1e6).toFixed(1)} MB/s)`);
  if (diff > JPEG_TOLERANCE) throw new Error(`the canvas differs by ${diff.toFixed(2)} levels`);
});

await check(3, "a drag in the page turns the camera", async () => {
  const box = await (await page.$("#view")).boundingBox();
  await page.mouse.move(box.x + 40, box.y + 40);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) {
    await page.mouse.move(box.x + 40 + 10 * i, box.y + 40 + 5 * i);
    await new Promise((r) => setTimeout(r, 30));
  }
  await page.mouse.up();
  await until("the program to report a new view", () => /\nview /.test(output), 10);
  let diff = 0;
  await until("the canvas to change", async () => {
    diff = meanDifference(await canvasPixels(), before);
    return diff > 3 * JPEG_TOLERANCE;
  }, 10);
  console.log(`# after the drag: mean difference ${diff.toFixed(2)} levels`);
  if (pageShot) await page.screenshot({ path: pageShot });
});

await check(4, "a bad token is refused", async () => {
  const other = await browser.newPage();
  const res = await other.goto(base + "?token=not-" + TOKEN);
  if (res.status() !== 403) throw new Error(`the page answered ${res.status()}, not 403`);
  const res2 = await other.goto(base);
  if (res2.status() !== 403) throw new Error(`without a token: ${res2.status()}, not 403`);
  // The WebSocket with a bad token never opens, from a page that has the good one.
  const opened = await page.evaluate(() => new Promise((resolve) => {
    const ws = new WebSocket("ws://" + location.host + "/ws?token=wrong", "cugl-frames");
    ws.onopen = () => resolve(true);
    ws.onclose = () => resolve(false);
    ws.onerror = () => {};
  }));
  if (opened) throw new Error("a WebSocket with a bad token was accepted");
});

await check(5, "the page says what it gets, and goes full-window", async () => {
  await page.bringToFront(); // check 4 opened another
  const line = await page.$eval("#link", (e) => e.textContent);
  for (const want of [codec === "video" ? "VP8 video" : "JPEG by", "frames/s received",
                      "round trip"])
    if (!line.includes(want)) throw new Error(`the page's line has no '${want}': '${line}'`);
  await page.click("#full");
  const box = await (await page.$("#view")).boundingBox();
  const full = await page.evaluate(() => document.body.classList.contains("full"));
  // object-fit keeps the proportion: the picture fills one side of 800 x 600.
  if (!full || Math.abs(box.width - 800) > 2 || Math.abs(box.height - 600) > 2)
    throw new Error(`full window: ${full}, the canvas ${box.width} x ${box.height}`);
  await page.keyboard.press("Escape");
  const back = await page.evaluate(() => document.body.classList.contains("full"));
  if (back) throw new Error("Escape did not leave full-window mode");
  console.log(`# ${line}`);
});

await browser.close();
child.stdin.end(); // serve_app exits when its stdin closes
const code = await exited;
if (code !== 0) {
  console.log(`# serve_app exited with ${code}`);
  failed++;
}
if (failed === 0) rmSync(dir, { recursive: true, force: true });
else console.log(`# the files are in ${dir}`);
process.exit(failed ? 1 : 0);
