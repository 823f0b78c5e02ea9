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

// TAP checks, numbered as they run: check(name, body[, why]) runs body
// (an exception fails the check, its stack as comments), or where `why`
// is given skips it, saying why (a failure under CUGL_TEST_NO_SKIP).
// failures() counts the checks that failed, and fail() one more failure of
// the script's own.
export function tapChecks() {
  let failed = 0, checks = 0;
  async function check(name, body, why = null) {
    const n = ++checks;
    if (why) {
      if (noSkip) {
        failed++;
        console.log(`not ok ${n} - ${name}`);
        console.log(`# would skip, but CUGL_TEST_NO_SKIP is set: ${why}`);
      } else {
        console.log(`ok ${n} - ${name} # SKIP ${why}`);
      }
      return;
    }
    try {
      await body();
      console.log(`ok ${n} - ${name}`);
    } catch (e) {
      failed++;
      console.log(`not ok ${n} - ${name}`);
      for (const line of String(e.stack || e).split("\n")) console.log("# " + line);
    }
  }
  return { check, failures: () => failed, fail: () => { failed++; } };
}
