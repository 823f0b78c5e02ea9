// What the browser suite's scripts share: Debian's chromium (CUGL_CHROMIUM
// names another), a skip of the whole test as the C tests' (exit 77; with
// CUGL_TEST_NO_SKIP set a failure instead), and puppeteer-core, the test
// skipped where it or chromium is not installed (scripts/bootstrap.sh
// installs both).
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.CUGL_CHROMIUM || "/usr/bin/chromium";
export const noSkip = Boolean(process.env.CUGL_TEST_NO_SKIP);

export function skip(why) {
  if (noSkip) {
    console.log(`Bail out! would skip, but CUGL_TEST_NO_SKIP is set: ${why}`);
    process.exit(1);
  }
  console.log(`1..0 # SKIP ${why}`);
  process.exit(77);
}

// puppeteer-core, once chromium is known to be there.
export async function loadPuppeteer() {
  let puppeteer;
  try {
    puppeteer = (await import("puppeteer-core")).default;
  } catch {
    skip("puppeteer-core is not installed (npm ci in tests/browser)");
  }
  if (!existsSync(CHROMIUM)) skip(`no chromium at ${CHROMIUM}`);
  return puppeteer;
}
