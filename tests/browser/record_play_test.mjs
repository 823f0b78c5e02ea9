// The browser suite: what the recorder writes (cugl/app_record.h) played by
// Debian's chromium, headless, driven by puppeteer-core, in a <video>.
// RECORD_CLIP (tests/record/record_clip.c) records a clip whose every
// picture is known (it prints their description) to an MP4 (H.264) and a
// WebM (VP8); a server here (node's http, 127.0.0.1, with byte ranges, as
// chromium's media stack asks for them) serves them and a page. For each
// container, TAP on stdout:
//   1. the metadata: the recording's size, and its duration within a frame;
//   2. the first frame's picture (drawn into a canvas, each region's mean
//      colour within TOLERANCE of the colour drawn at the frame's time);
//   3. a seek forward, then back, shows the picture of the time sought;
//   4. from its start it plays to its end: frames presented
//      (requestVideoFrameCallback; at least half, as a stalled compositor
//      drops some), their media times increasing, and each current frame
//      then (WebCodecs' VideoFrame of the element) the picture of its time.
// A container whose codec this build does not record, or that this
// chromium does not play (builds without H.264: canPlayType is empty),
// has its checks skipped, with why; under CUGL_TEST_NO_SKIP they fail.
// Exits 77 (skipped) without chromium or puppeteer-core (scripts/bootstrap.sh
// installs both); with CUGL_TEST_NO_SKIP set that is a failure instead.
//
// usage: node record_play_test.mjs RECORD_CLIP
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { CHROMIUM, loadPuppeteer, skip, tapChecks } from "./browser_common.mjs";

// The largest difference of a region's mean from the colour drawn, in
// levels of a channel: 4:2:0, the codecs' quantizers, and a player's own
// YUV to RGB.
const TOLERANCE = 24;
const CONTAINERS = [
  { ext: "mp4", title: "MP4 (H.264)", type: 'video/mp4; codecs="avc1.42E01E"' },
  { ext: "webm", title: "WebM (VP8)", type: 'video/webm; codecs="vp8"' },
];
const CHECKS = ["the metadata: its size and duration", "the first frame's picture",
                "a seek forward, then back, shows the picture there",
                "it plays to its end, each frame shown the picture of its time"];

const recordClip = process.argv[2];
if (!recordClip) {
  console.log("usage: node record_play_test.mjs RECORD_CLIP");
  process.exit(99);
}
const puppeteer = await loadPuppeteer();

// The recordings: each container's clip description, or why there is none
// (`skipped`: this build records no such video; else a failure).
const dir = mkdtempSync(join(tmpdir(), "cugl-record-play-"));
for (const c of CONTAINERS) {
  c.path = join(dir, "clip." + c.ext);
  const r = spawnSync(recordClip, [c.path], { encoding: "utf8", timeout: 60000 });
  const said = (r.stdout + r.stderr).trim() || String(r.error || `signal ${r.signal}`);
  if (r.status === 0) c.clip = JSON.parse(r.stdout);
  else if (r.status === 77) c.skipped = `${c.title} is not recorded here: ${said}`;
  else c.failure = `record_clip ${c.path} exited with ${r.status}: ${said}`;
}

// The page, and the recordings by their names, whole or a byte range.
const PAGE = `<!doctype html>
<meta charset="utf-8"><title>cugl recording</title>
<video id="video" muted playsinline preload="auto"></video><canvas id="canvas"></canvas>
<script>
const video = document.getElementById("video"), canvas = document.getElementById("canvas");
const g = canvas.getContext("2d", { willReadFrequently: true });
const event = (name) => new Promise((resolve, reject) => {
  video.addEventListener(name, resolve, { once: true });
  video.addEventListener("error", () => reject(new Error(
    "media error " + video.error.code + ": " + video.error.message)), { once: true });
});
// The video's current frame as WebCodecs takes it from the element, its
// picture with its own timestamp (the frame drawImage(video) draws may be
// a later one than the last presented), drawn into the canvas: its time
// and each region's mean colour.
function sample(regions) {
  const frame = new VideoFrame(video);
  canvas.width = frame.displayWidth;
  canvas.height = frame.displayHeight;
  g.drawImage(frame, 0, 0);
  const time = frame.timestamp / 1e6;
  frame.close();
  return { time, colours: regions.map(([x, y, w, h]) => {
    const d = g.getImageData(x, y, w, h).data, sum = [0, 0, 0];
    for (let i = 0; i < d.length; i += 4) for (let k = 0; k < 3; k++) sum[k] += d[i + k];
    return sum.map((s) => s / (w * h));
  }) };
}
window.clip = {
  async load(src) {
    const loaded = event("loadedmetadata");
    video.src = src;
    await loaded;
    return { width: video.videoWidth, height: video.videoHeight, duration: video.duration };
  },
  async first(regions) {
    if (video.readyState < 2) await event("loadeddata");
    return sample(regions);
  },
  // Play from the start to the end; every frame presented: its media
  // time, and the current frame then.
  async play(regions) {
    if (video.currentTime !== 0) await window.clip.seek(0, []);
    const seen = [];
    let next;
    const presented = (now, m) => {
      seen.push({ time: m.mediaTime, frame: sample(regions) });
      next = video.requestVideoFrameCallback(presented);
    };
    next = video.requestVideoFrameCallback(presented);
    const ended = event("ended");
    await video.play();
    await ended;
    video.cancelVideoFrameCallback(next);
    const q = video.getVideoPlaybackQuality();
    return { seen, decoded: q.totalVideoFrames, dropped: q.droppedVideoFrames,
             end: video.currentTime, duration: video.duration };
  },
  // The first frame presented after a seek: its media time, and the
  // current frame then ("seeked" may come before it is presented).
  async seek(time, regions) {
    const shown = new Promise((resolve) => video.requestVideoFrameCallback(
      (now, m) => resolve({ time: m.mediaTime, frame: sample(regions) })));
    const seeked = event("seeked");
    video.currentTime = time;
    await seeked;
    return shown;
  },
};
</script>
`;
// The bytes a Range header asks for, one range as RFC 9110 (14.1.2) has
// it: "bytes=A-B", "bytes=A-" or the last N, "bytes=-N"; null where none
// of the file can be given.
function byteRange(asked, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(asked);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  const [start, end] = m[1] === "" ? [Math.max(0, size - Number(m[2])), size - 1]
    : [Number(m[1]), m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1)];
  return start <= end ? [start, end] : null;
}
let ranges = 0;
const server = createServer((req, res) => {
  const path = new URL(req.url, "http://127.0.0.1").pathname;
  if (path === "/") {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(PAGE);
    return;
  }
  const c = CONTAINERS.find((c) => path === "/clip." + c.ext && c.clip);
  if (!c) {
    res.writeHead(404);
    res.end();
    return;
  }
  const body = readFileSync(c.path), size = body.length;
  const headers = { "Content-Type": "video/" + c.ext, "Accept-Ranges": "bytes" };
  const send = (status, more, bytes) => {
    res.writeHead(status, { ...headers, ...more, "Content-Length": bytes.length });
    res.end(req.method === "HEAD" ? undefined : bytes);
  };
  if (!req.headers.range) return send(200, {}, body);
  const r = byteRange(req.headers.range, size);
  if (!r) return send(416, { "Content-Range": `bytes */${size}` }, Buffer.alloc(0));
  ranges++;
  send(206, { "Content-Range": `bytes ${r[0]}-${r[1]}/${size}` }, body.subarray(r[0], r[1] + 1));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${server.address().port}/`;

// The checks, numbered as they run; a skip says why, and fails under
// CUGL_TEST_NO_SKIP.
const { check, failures } = tapChecks();
// `promise`, or a failure naming `what` after `seconds`.
function within(what, seconds, promise) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${seconds} s: ${what}`)),
                       seconds * 1000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// The clip's regions: the middle of each band, and of the bottom half.
function regions(clip) {
  const w = clip.width, h = clip.height, bw = w / clip.bands.length;
  return [...clip.bands.map((_, b) => [Math.round(b * bw + bw / 2) - 6, Math.round(h / 4) - 6,
                                       12, 12]),
          [Math.round(w / 2) - 20, Math.round(h * 3 / 4) - 8, 40, 16]];
}
// Frame n's colours, region by region.
const colours = (clip, n) =>
  [...clip.bands, clip.steps[Math.floor(n / clip.step) % clip.steps.length]];
// The worst channel's difference of `got` from frame n's colours.
const difference = (clip, got, n) => Math.max(...colours(clip, n).flatMap(
  (want, r) => want.map((v, k) => Math.abs(got[r][k] - v))));
const rgb = (c) => `(${c.map((v) => Math.round(v)).join(",")})`;
// The frame at `time` seconds.
const frameAt = (clip, time) => Math.round(time * clip.fps);
// Fails unless a sampled frame's picture is that of its time; the worst
// channel's difference.
function isFrame(clip, frame, what) {
  const n = frameAt(clip, frame.time), d = difference(clip, frame.colours, n);
  if (d > TOLERANCE)
    throw new Error(`${what}: the picture ${frame.colours.map(rgb).join(" ")} is not frame ` +
                    `${n}'s ${colours(clip, n).map(rgb).join(" ")} (by ${d.toFixed(1)} levels)`);
  return d;
}

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--autoplay-policy=no-user-gesture-required"],
});
const version = await browser.version();
const page = await browser.newPage();
await page.goto(base);
console.log(`# ${CHROMIUM}: ${version}`);
for (const c of CONTAINERS) {
  const can = await page.evaluate((t) => document.createElement("video").canPlayType(t), c.type);
  console.log(`# canPlayType('${c.type}'): '${can}'`);
  if (!can && !c.skipped && !c.failure)
    c.skipped = `${CHROMIUM} (${version}) plays no ${c.title} here: canPlayType('${c.type}') ` +
                "is empty";
}

console.log(`1..${CONTAINERS.length * CHECKS.length}`);
for (const c of CONTAINERS) {
  const clip = c.clip, why = c.skipped;
  // A failure to record fails every check of the container.
  const run = (body) => async () => {
    if (c.failure) throw new Error(c.failure);
    await body();
  };
  const reg = clip && regions(clip);
  await check(`${c.title}: ${CHECKS[0]}`, run(async () => {
    const m = await within("loadedmetadata", 10,
                           page.evaluate((src) => window.clip.load(src), base + "clip." + c.ext));
    const want = clip.frames / clip.fps;
    console.log(`# ${m.width} x ${m.height}, ${m.duration} s (${clip.frames} frames at ` +
                `${clip.fps}/s: ${want} s)`);
    if (m.width !== clip.width || m.height !== clip.height)
      throw new Error(`the video is ${m.width} x ${m.height}, not ${clip.width} x ${clip.height}`);
    if (!(Math.abs(m.duration - want) <= 1 / clip.fps))
      throw new Error(`the duration is ${m.duration} s, not ${want} s within a frame`);
  }), why);
  await check(`${c.title}: ${CHECKS[1]}`, run(async () => {
    const f = await within("the first frame", 10,
                           page.evaluate((r) => window.clip.first(r), reg));
    if (frameAt(clip, f.time) !== 0) throw new Error(`the first frame is at ${f.time} s`);
    const d = isFrame(clip, f, "the first frame");
    console.log(`# ${f.colours.map(rgb).join(" ")}: within ${d.toFixed(1)} levels`);
  }), why);
  await check(`${c.title}: ${CHECKS[2]}`, run(async () => {
    // Mid-frame times, in the middle of a step of the picture.
    for (const n of [Math.floor(clip.frames * 3 / 4), Math.floor(clip.frames / 4)]) {
      const s = await within(`a seek to frame ${n}`, 10,
                             page.evaluate((t, r) => window.clip.seek(t, r),
                                           (n + 0.5) / clip.fps, reg));
      const shown = [frameAt(clip, s.time), frameAt(clip, s.frame.time)];
      if (shown[0] !== n || shown[1] !== n)
        throw new Error(`a seek to frame ${n} presented frame ${shown[0]} (at ${s.time} s), ` +
                        `and its current frame is ${shown[1]}`);
      const d = isFrame(clip, s.frame, `a seek to ${s.time} s`);
      console.log(`# frame ${n} at ${s.time} s: ${s.frame.colours.map(rgb).join(" ")}, ` +
                  `within ${d.toFixed(1)} levels`);
    }
  }), why);
  await check(`${c.title}: ${CHECKS[3]}`, run(async () => {
    const p = await within("the video to play to its end", 10 + 2 * clip.frames / clip.fps,
                           page.evaluate((r) => window.clip.play(r), reg));
    let worst = 0, ahead = 0;
    p.seen.forEach((s, i) => {
      if (i > 0 && !(s.time > p.seen[i - 1].time))
        throw new Error(`media time ${s.time} s presented after ${p.seen[i - 1].time} s`);
      worst = Math.max(worst, isFrame(clip, s.frame, `presented at ${s.time} s`));
      ahead = Math.max(ahead, frameAt(clip, s.frame.time) - frameAt(clip, s.time));
    });
    const last = p.seen.length ? p.seen[p.seen.length - 1].time : NaN;
    console.log(`# ${p.seen.length} frames presented, the last at ${last} s; ` +
                `${p.decoded} decoded, ${p.dropped} dropped; the current frame up to ` +
                `${ahead} ahead; the worst picture within ${worst.toFixed(1)} levels`);
    if (p.end !== p.duration)
      throw new Error(`"ended" came at ${p.end} s of ${p.duration} s`);
    // A stalled compositor drops frames to keep to the video's clock (the
    // last 8 once, beside other work): half of them shown is playing.
    if (p.seen.length < clip.frames / 2)
      throw new Error(`${p.seen.length} frames presented of ${clip.frames}`);
  }), why);
}
console.log(`# ${ranges} byte ranges served`);

await browser.close();
server.close();
if (failures() === 0) rmSync(dir, { recursive: true, force: true });
else console.log(`# the recordings are in ${dir}`);
process.exit(failures() ? 1 : 0);
