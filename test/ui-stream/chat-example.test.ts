// `npm run chat` end to end, in headless Chromium: the example server starts as a child
// process, the page (the AI SDK's own chat client, bundled by the server) sends a message,
// the run's tool call shows with Approve / Deny, a click approves it in the browser, the
// durable run goes on and the answer shows in the same assistant message. Also a denial.
// UPDATE_SCREENSHOTS=1 rewrites docs/chat-ui.png; otherwise the screenshot goes to a temp dir.
// Then raw HTTP requests: a foreign Host or Origin and a body that is not JSON are refused,
// and a chat whose run has ended is forgotten.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
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

  it('links or shows only http(s) and data: URLs of the files it gets', async () => {
    const { page, errors } = await openChat();
    // A stream as a server would send it for a tool whose files carry URLs of any scheme.
    const files = [
      { url: 'javascript:alert(document.cookie)', mediaType: 'text/html' },
      { url: ' JavaScript:alert(1)', mediaType: 'image/png' },
      { url: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
      { url: 'https://files.example/report.pdf', mediaType: 'application/pdf' },
    ];
    const chunks = [
      { type: 'start', messageId: 'm-files' },
      ...files.map((file) => ({ type: 'file', ...file })),
      { type: 'finish', finishReason: 'stop' },
    ];
    await page.route('**/api/chat', (route) =>
      route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' },
        body: `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`,
      }),
    );
    await send(page, 'show me the files');
    await page.waitForSelector('#status[data-status="ready"]', { timeout: 20_000 });
    await page.locator('.message.assistant .file').nth(3).waitFor({ timeout: 20_000 });
    const urls = await page.locator('.message.assistant .file').evaluateAll((boxes) =>
      boxes.map((box) => {
        const shown = box.querySelector('[href], [src]');
        return shown?.getAttribute('href') ?? shown?.getAttribute('src') ?? null;
      }),
    );
    expect(urls).toEqual([
      null,
      null,
      'data:image/png;base64,iVBORw0KGgo=',
      'https://files.example/report.pdf',
    ]);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});

/** A raw HTTP request to the example (any Host header, unlike fetch), read to its end. */
function raw(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        timeout: 20_000,
      },
      (response) => {
        const pieces: Buffer[] = [];
        response.on('data', (piece: Buffer) => pieces.push(piece));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(pieces).toString() }),
        );
        response.on('error', reject);
      },
    );
    sent.on('timeout', () => sent.destroy(new Error(`no answer to ${path} in 20 s`)));
    sent.on('error', reject);
    sent.end(options.body);
  });
}

const say = (chatId: string, text: string) =>
  JSON.stringify({
    id: chatId,
    messages: [{ id: `u-${chatId}`, role: 'user', parts: [{ type: 'text', text }] }],
  });

describe('npm run chat (examples/chat-server.ts), over raw HTTP', () => {
  it('answers only its own host and origin, and only JSON', async () => {
    const own = new URL(url).host; // 127.0.0.1:<port>
    const port = new URL(url).port;
    const json = { 'content-type': 'application/json' };
    // DNS rebinding: another name resolved to 127.0.0.1 reaches the server with its own Host.
    expect((await raw('/', { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    expect(
      (
        await raw('/api/chat', {
          method: 'POST',
          headers: { ...json, host: `evil.example:${port}` },
          body: say('c-host', 'hello'),
        })
      ).status,
    ).toBe(403);
    // Another page's request, with the right Host but its own Origin.
    expect(
      (
        await raw('/api/chat', {
          method: 'POST',
          headers: { ...json, host: own, origin: 'http://evil.example' },
          body: say('c-origin', 'hello'),
        })
      ).status,
    ).toBe(403);
    // A cross-origin form or no-cors fetch can only send text/plain and the like.
    expect(
      (
        await raw('/api/chat', {
          method: 'POST',
          headers: { host: own, 'content-type': 'text/plain' },
          body: say('c-text', 'hello'),
        })
      ).status,
    ).toBe(415);
    // Its own page, under either local name.
    expect((await raw('/', { headers: { host: `localhost:${port}` } })).status).toBe(200);
    const answered = await raw('/api/chat', {
      method: 'POST',
      headers: {
        ...json,
        'content-type': 'application/json; charset=utf-8',
        host: own,
        origin: `http://${own}`,
      },
      body: say('c-own', 'hello'),
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toContain('I can drop tables for you');
  }, 60_000);

  it('forgets a chat once its run has ended', async () => {
    const own = new URL(url).host;
    const headers = { 'content-type': 'application/json', host: own };
    const first = await raw('/api/chat', { method: 'POST', headers, body: say('c-ended', 'hi') });
    expect(first.status).toBe(200);
    expect(first.body).toContain('data: [DONE]');
    // An answer posted for that chat finds no run held for it any more.
    const later = await raw('/api/chat', {
      method: 'POST',
      headers,
      body: JSON.stringify({
        id: 'c-ended',
        messages: [
          { id: 'u-c-ended', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
          { id: 'm-c-ended', role: 'assistant', parts: [] },
        ],
      }),
    });
    expect(later.status).toBe(409);
  }, 60_000);
});
