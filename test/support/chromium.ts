import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

// One way to start a browser for the tests that need one (the diagram export's render check,
// the run viewer's end-to-end test): Debian's Chromium, headless, offline. The flags keep it
// from calling Google's services at start-up (refused here, and slow where it is not). Each
// launch gets a fresh temporary profile: Playwright creates one per `launch()` and removes it
// on close (it refuses a `--user-data-dir` flag for that reason), so runs stay independent.
// `.ci/run` installs the package when it is missing.

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches headless Chromium with a temporary profile, removed when the browser closes.
 * Throws a clear error when the browser is not installed. Close it in `afterAll`.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install chromium); npm test does this when it is missing (scripts/test-setup.sh).`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
}
