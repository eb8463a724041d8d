// `npm run chat` end to end, in headless Chromium: the example server starts as a child
// process, the page (the AI SDK's own chat client, bundled by the server) sends a message,
// the run's tool call shows with Approve / Deny, a click approves it in the browser, the
// durable run goes on and the answer shows in the same assistant message. Also a denial.
// UPDATE_SCREENSHOTS=1 rewrites docs/chat-ui.png; otherwise the screenshot goes to a temp dir.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildOutput, childOutput } from '../support/child-output.js';
import { launchChromium } from '../support/chromium.js';

let browser: Browser;
let server: ChildProcess;
let output: ChildOutput;
let url: string;

beforeAll(async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
  // The embedded scripted model, whatever keys the machine running the tests has.
  for (const key of Object.keys(env)) {
    if (/^(OPENAI|ANTHROPIC|GEMINI)_/.test(key)) delete env[key];
  }
  server = spawn(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', 'examples/chat-server.ts'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  output = childOutput(server);
  const started = output.until((lines) => lines.some((l) => l.startsWith('chat: ')), 'it listens');
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`the chat server did not start in 60 s: ${output.stderr()}`)),
      60_000,
    ).unref(),
  );
  await Promise.race([started, timeout]);
  url = (output.lines.find((l) => l.startsWith('chat: ')) ?? '').slice('chat: '.length);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    const killed = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await output.exited;
    clearTimeout(killed);
  }
}, 30_000);

/** A page on the chat that fails the test on any script error or request to another origin. */
async function openChat(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 900, height: 640 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.route(
    (target) => target.origin !== new URL(url).origin,
    (route) => {
      errors.push(`requested ${route.request().url()}`);
      return route.abort();
    },
  );
  await page.goto(url);
  return { page, errors };
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill('#input', text);
  await page.click('button[type=submit]');
}

describe('npm run chat (examples/chat-server.ts), in a browser', () => {
  it('shows the tool call, takes the approval, and shows the answer', async () => {
    const { page, errors } = await openChat();
    await send(page, 'Please drop the tmp_2024 table');
    const tool = page.locator('.tool[data-tool="drop_table"]');
    await tool.locator('button.approve').waitFor({ timeout: 20_000 });
    expect(await tool.getAttribute('data-state')).toBe('approval-requested');
    expect(await tool.textContent()).toContain('{"table":"tmp_2024"}');
    await page.waitForSelector('#status[data-status="ready"]', { timeout: 20_000 });

    await tool.locator('button.approve').click();
    await page.waitForSelector('.message.assistant .text >> text=Done: table tmp_2024 is gone.', {
      timeout: 20_000,
    });
    await page.waitForSelector('#status[data-status="ready"]', { timeout: 20_000 });
    expect(await tool.getAttribute('data-state')).toBe('output-available');
    expect(await tool.textContent()).toContain('{"dropped":"tmp_2024"}');
    // The answer went into the message that held the approval, not a second one.
    expect(
      await page
        .locator('.message')
        .evaluateAll((ms) => ms.map((m) => m.getAttribute('data-role'))),
    ).toEqual(['user', 'assistant']);
    expect(errors).toEqual([]);

    // docs/chat-ui.png is rewritten only on request (its ids and timings differ every run).
    const scratch = process.env.UPDATE_SCREENSHOTS
      ? undefined
      : await mkdtemp(join(tmpdir(), 'statecraft-chat-'));
    const path = scratch ? join(scratch, 'chat-ui.png') : 'docs/chat-ui.png';
    try {
      await page.screenshot({ path });
      const png = await readFile(path);
      expect(png.subarray(1, 4).toString()).toBe('PNG');
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
    await page.close();
  }, 90_000);

  it('a denied call does not run, and the model reads why', async () => {
    const { page, errors } = await openChat();
    await send(page, 'drop the users table');
    const tool = page.locator('.tool[data-tool="drop_table"]');
    await tool.locator('button.deny').waitFor({ timeout: 20_000 });
    await page.waitForSelector('#status[data-status="ready"]', { timeout: 20_000 });
    await tool.locator('button.deny').click();
    await page.waitForSelector('.message.assistant .text >> text=I did not drop it', {
      timeout: 20_000,
    });
    expect(await tool.getAttribute('data-state')).toBe('output-denied');
    expect(await page.locator('.message.assistant .text').textContent()).toContain(
      'Not approved: denied in the browser',
    );
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
