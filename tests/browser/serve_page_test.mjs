// The browser suite: a program that serves its frames (tests/serve/serve_app,
// GL only, so Mesa runs it), seen in Debian's chromium, headless, driven by
// puppeteer-core. TAP on stdout:
//   1. the page loads and frames arrive on its canvas;
//   2. the canvas matches the program's own screenshot within JPEG's tolerance;
//   3. a drag in the page turns the program's camera, and the canvas changes;
//   4. a bad token is refused, for the page (403) and for its WebSocket;
//   5. the page shows what it gets (codec, frames a second, link, round
//      trip), and its full-window mode gives the picture the window;
//   6. with --record-read READER (tests/record's record_read): its record
//      button downloads a WebM of what it showed (the browser's
//      MediaRecorder), which the tests' own reader reads and decodes: the
//      canvas's size, a frame for most of the page's, none flat.
// With --codec vp8 or h264 the program sends video (serve_app --codec
// video) and the page offers that codec alone (?codecs=vp8, ?codecs=h264),
// which it decodes with WebCodecs (the page is from 127.0.0.1: a secure
// context): the same checks, and the page must say it decoded that codec.
// With h264, after 2, also: the page follows a change of codec, to VP8
// (JPEG where this cugl has no VP8) and back to H.264, each from its key
// frame on, and each picture matches. Where chromium decodes no such
// video, the test is skipped, with why. With --encoder gpu its JPEGs are
// GL's compute shaders' (serve_app --encoder gpu; llvmpipe's where there
// is no GPU): restart markers, fill bytes.
// Exits 77 (skipped) without chromium or puppeteer-core (scripts/bootstrap.sh
// installs both); with CUGL_TEST_NO_SKIP set a skip is a failure instead.
//
// usage: node serve_page_test.mjs SERVE_APP [--codec jpeg|vp8|h264] [--encoder gpu]
//                                           [--page-screenshot FILE.png]
//                                           [--record-read READER]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { CHROMIUM, loadPuppeteer, skip, tapChecks } from "./browser_common.mjs";

const TOKEN = "browser-Token.7";
const W = 320, H = 240;

const [app, ...rest] = process.argv.slice(2);
const option = (name) => { const i = rest.indexOf(name); return i >= 0 ? rest[i + 1] : null; };
const pageShot = option("--page-screenshot");
const codec = option("--codec") || "jpeg";
const encoder = option("--encoder") || "auto";
const recordRead = option("--record-read");
// The video codecs, by the server's names, as the page names them.
const TITLES = { vp8: "VP8", h264: "H.264" };
const video = Object.hasOwn(TITLES, codec);
// Mean absolute difference of a channel, in levels: JPEG at quality 85, and
// video (4:2:0 as well, its rate control's quantizer) a little more.
const JPEG_TOLERANCE = video ? 8 : 6;

if (!app || !(video || codec === "jpeg")) {
  console.log("usage: node serve_page_test.mjs SERVE_APP [--codec jpeg|vp8|h264] " +
              "[--encoder E] [--page-screenshot FILE]");
  process.exit(99);
}
const puppeteer = await loadPuppeteer();

const dir = mkdtempSync(join(tmpdir(), "cugl-browser-"));
const shot = join(dir, "shot.png");
let output = "";
const child = spawn(app, ["--port", "0", "--token", TOKEN, "--size", `${W}x${H}`,
                          "--screenshot", shot, "--codec", video ? "video" : codec,
                          "--encoder", encoder],
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
    child.stdin.end();
    skip(output.trim());
  }
  throw e;
});
const base = `http://127.0.0.1:${port}/`;
// The page's address; for video it offers the codec alone.
const pageUrl = base + "?token=" + TOKEN + (video ? "&codecs=" + codec : "");
// The checks, numbered as they run.
const { check, failures, fail } = tapChecks();

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
// Whether this chromium decodes the codec, as the page finds (WebCodecs'
// isConfigSupported): where it does not, the test is skipped with why.
if (video) {
  const probe = await browser.newPage();
  await probe.goto(pageUrl);
  const v = await until("the page to find what it decodes", () => probe.evaluate(
    () => window.cuglView.can_video !== null && window.cuglView), 30);
  await probe.close();
  if (!v.can_video) {
    const version = await browser.version();
    await browser.close();
    child.stdin.end();
    await exited;
    skip(`${CHROMIUM} (${version}) decodes no ${TITLES[codec]} with WebCodecs here: ` +
         v.codecs_why);
  }
}

console.log(`1..${5 + (codec === "h264") + Boolean(recordRead)}`);
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

// Until the page has drawn `n` video frames more than `from` (by default
// those drawn now), the last of `want` (a video codec's name), decoded by
// WebCodecs; the page must say so under the picture.
const videoDrawn = () => page.evaluate(() => window.cuglView.video_frames);
async function videoFrames(want, n, from) {
  if (from === undefined) from = await videoDrawn();
  await until(`${TITLES[want]} frames decoded by WebCodecs`, () => page.evaluate(
    (want, to) => window.cuglView.codec === want && window.cuglView.video_frames >= to,
    want, from + n), 30).catch(async (e) => {
    const v = await page.evaluate(() => ({ ...window.cuglView, header: null, link: null }));
    const why = await page.evaluate(
      () => window.cuglView.header && window.cuglView.header.codec_why);
    throw new Error(`${e.message}: ${JSON.stringify(v)}; the server says: ${why}`);
  });
  const line = await page.$eval("#link", (e) => e.textContent);
  if (!line.includes(`${TITLES[want]} video`))
    throw new Error(`the page does not say ${TITLES[want]}: '${line}'`);
  console.log(`# ${line}`);
}

await check("the page loads and frames arrive", async () => {
  const res = await page.goto(pageUrl);
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
  if (video) await videoFrames(codec, 3);
});

// Until the canvas matches the program's screenshot (the picture is still:
// whatever level or bitrate the link first got, a frame of the best one the
// link carries follows); the canvas's pixels.
async function matchesScreenshot() {
  const want = await pngPixels(shot);
  let diff = 0, pixels;
  await until("the canvas to match", async () => {
    pixels = await canvasPixels();
    diff = meanDifference(pixels, want);
    return diff <= JPEG_TOLERANCE;
  }, 10).catch(() => {});
  // The picture as the page describes it (a header alone, for a picture
  // unchanged, has no codec, quality or bitrate).
  const picture = (await page.$eval("#link", (e) => e.textContent)).split(" | ")[0];
  const h = await page.evaluate(() => window.cuglView.header);
  console.log(`# mean difference ${diff.toFixed(2)} levels (${picture}, ` +
              `link ${(h.throughput / 1e6).toFixed(1)} MB/s)`);
  if (diff > JPEG_TOLERANCE) throw new Error(`the canvas differs by ${diff.toFixed(2)} levels`);
  return pixels;
}

let before;
await check("the canvas matches the program's screenshot", async () => {
  before = await matchesScreenshot();
});

// The page's own WebSocket (the page's top-level `ws`) tells the server it
// now decodes VP8 alone, then H.264 alone: the server starts each stream
// with a key frame, and the page decodes it with a decoder of its own.
if (codec === "h264") {
  await check("the page follows a change of codec, to VP8 and back", async () => {
    let from = await videoDrawn();
    await page.evaluate(() => ws.send("codecs vp8\n"));
    await until("the server to change codec", () => page.evaluate(
      () => window.cuglView.codec !== "h264"), 30);
    const [got, why] = await page.evaluate(
      () => [window.cuglView.codec, window.cuglView.header.codec_why]);
    if (got === "vp8") await videoFrames("vp8", 1, from);
    else if (got === "jpeg" && /built without/.test(why)) console.log(`# JPEG, not VP8: ${why}`);
    else throw new Error(`the server sent ${got} for a page that decodes VP8: ${why}`);
    await matchesScreenshot();
    from = await videoDrawn();
    await page.evaluate(() => ws.send("codecs h264\n"));
    await videoFrames("h264", 1, from);
    before = await matchesScreenshot();
  });
}

await check("a drag in the page turns the camera", async () => {
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

await check("a bad token is refused", async () => {
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

await check("the page says what it gets, and goes full-window", async () => {
  await page.bringToFront(); // check 4 opened another
  const line = await page.$eval("#link", (e) => e.textContent);
  // The server's PSNR of what the page shows: libjpeg-turbo's JPEGs and
  // libvpx's VP8 are measured; the GPU's JPEGs and OpenH264's say why not.
  const measured = codec === "vp8" || (codec === "jpeg" && encoder !== "gpu");
  const fidelity = measured ? "dB PSNR (server's estimate)" : "PSNR not measured: ";
  for (const want of [video ? TITLES[codec] + " video" : "JPEG by", "frames/s received",
                      "round trip", fidelity])
    if (!line.includes(want)) throw new Error(`the page's line has no '${want}': '${line}'`);
  const psnr = await page.evaluate(() => window.cuglView.psnr);
  if (measured ? !(psnr > 15 && psnr < 100) : psnr !== -1)
    throw new Error(`the page's PSNR is ${psnr}`);
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

if (recordRead) {
  await check("the record button downloads a WebM of what the page showed", async () => {
    const cdp = await page.target().createCDPSession();
    await cdp.send("Page.setDownloadBehavior", { behavior: "allow", downloadPath: dir });
    const before = await page.evaluate(() => window.cuglView.frames);
    await page.click("#record");
    // A drag while it records: the program draws, the page shows new frames.
    const box = await (await page.$("#view")).boundingBox();
    await page.mouse.move(box.x + 200, box.y + 60);
    await page.mouse.down();
    for (let i = 1; i <= 20; i++) {
      await page.mouse.move(box.x + 200 - 6 * i, box.y + 60 + 3 * i);
      await new Promise((r) => setTimeout(r, 30));
    }
    await page.mouse.up();
    const label = await until("the button to count", () => page.$eval(
      "#record", (b) => b.textContent.startsWith("stop (1 s)") && b.textContent), 10);
    await page.click("#record");
    const shown = (await page.evaluate(() => window.cuglView.frames)) - before;
    const made = await until("the recording", () => page.evaluate(
      () => window.cuglView.recorded || window.cuglView.record_why), 10);
    if (typeof made === "string")
      throw new Error(`no recording: ${made} (the page drew ${shown} frames meanwhile)`);
    // Downloaded: the file at its name with every byte the page made.
    const file = await until("the download", () => readdirSync(dir).find(
      (f) => f.endsWith(".webm") && statSync(join(dir, f)).size === made.bytes), 10);
    const bytes = readFileSync(join(dir, file));
    if (bytes.length !== made.bytes || bytes.readUInt32BE(0) !== 0x1a45dfa3)
      throw new Error(`${file}: ${bytes.length} bytes of ${made.bytes}, not WebM`);
    // The tests' own reader: its codec, size and frames, each decoded.
    const lines = execFileSync(recordRead, ["--decode", join(dir, file)]).toString()
      .trim().split("\n");
    const [, codecName, w, h, n] = /codec=(\w+) width=(\d+) height=(\d+) frames=(\d+)/
      .exec(lines[0]) || [];
    const spreads = lines.slice(1).map((l) => Number(/spread=([\d.]+)/.exec(l)[1]));
    console.log(`# ${file}: ${made.type}, ${bytes.length} bytes, ${made.seconds.toFixed(1)} s; ` +
                `${lines[0]}; the page drew ${shown} frames meanwhile; "${label}" on the button`);
    if (Number(w) !== W || Number(h) !== H)
      throw new Error(`the recording is ${w} x ${h}, the canvas ${W} x ${H}`);
    if (!(Number(n) >= shown / 2 && Number(n) >= 10))
      throw new Error(`${n} frames recorded of ${shown} the page drew`);
    if (Math.min(...spreads) < 4)
      throw new Error(`a flat (black) frame: luma spreads ${spreads.join(" ")}`);
    if (!["vp8", "vp9"].includes(codecName)) throw new Error(`codec ${codecName}`);
  });
}

await browser.close();
child.stdin.end(); // serve_app exits when its stdin closes
const code = await exited;
if (code !== 0) {
  console.log(`# serve_app exited with ${code}`);
  fail();
}
if (failures() === 0) rmSync(dir, { recursive: true, force: true });
else console.log(`# the files are in ${dir}`);
process.exit(failures() ? 1 : 0);
