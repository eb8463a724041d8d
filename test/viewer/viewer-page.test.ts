// The run viewer end to end (SPEC X4, A5, D1), in headless Chromium: the page loads from the
// viewer alone, a scripted run streams into it, its machine's states light up while it runs,
// the timeline shows its calls with their tokens, and a page opened after a composed run
// shows the whole tree of runs. The last test takes the README's screenshot.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startViewer, type Viewer } from '../../src/viewer/server.js';
import { launchChromium } from '../support/chromium.js';
import { triagePipeline } from './triage-pipeline.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

const viewers: Viewer[] = [];
afterEach(async () => {
  await Promise.all(viewers.splice(0).map((viewer) => viewer.close()));
});

/** A viewer on a free port, and a 1280×800 page on it that fails the test on any script error. */
async function openViewer(): Promise<{ viewer: Viewer; page: Page; errors: string[] }> {
  const viewer = await startViewer({ port: 0 });
  viewers.push(viewer);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // Offline: anything the page asks of another origin is a failure.
  await page.route(
    (url) => url.origin !== new URL(viewer.url).origin,
    (route) => {
      errors.push(`requested ${route.request().url()}`);
      return route.abort();
    },
  );
  await page.goto(viewer.url);
  return { viewer, page, errors };
}

/** The classes of the diagram's node for a state id, e.g. `s_doing`. */
async function stateClasses(page: Page, stateId: string): Promise<string[]> {
  const classes = await page
    .locator(`#diagram g[data-state-id="${stateId}"]`)
    .getAttribute('class');
  return (classes ?? '').split(/\s+/);
}

describe('statecraft view, in a browser', () => {
  it('draws a running chain and lights up its path as it goes', async () => {
    const { viewer, page, errors } = await openViewer();
    await page.waitForSelector('#connection[data-state="live"]');

    // The tool waits for the test, so the page can be looked at while the run is in `doing`.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const add = defineTool({
      name: 'add',
      description: 'Adds two numbers.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        await gate;
        return a + b;
      },
    });
    const chain = createChain({
      name: 'adder',
      model: new ScriptedModel([
        {
          toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }],
          usage: { inputTokens: 120, outputTokens: 15 },
        },
        { text: 'The sum is 5.', usage: { inputTokens: 160, outputTokens: 9 } },
      ]),
      tools: [add],
    });
    const run = chain.invoke('What is 2 + 3?', { observers: viewer.observer });

    // Mid-run: the diagram is drawn, `doing` is current, `thinking` was visited, the tool runs.
    await page.waitForSelector('#diagram g[data-state-id="s_doing"].sc-current');
    expect(await page.locator('#diagram svg').count()).toBe(1);
    expect(await stateClasses(page, 's_thinking')).toContain('sc-visited');
    expect(await stateClasses(page, 's_thinking')).not.toContain('sc-current');
    expect(await stateClasses(page, 's_succeeded')).not.toContain('sc-visited');
    expect(await page.locator('#run-status').textContent()).toBe('running');
    await page.waitForSelector('#timeline .track.tool.open');
    expect(await page.locator('#timeline .track.model').count()).toBe(1);

    release();
    const result = await run;
    expect(result.text).toBe('The sum is 5.');

    // The end: `succeeded` is current, the path visited, the calls closed with their tokens.
    await page.waitForSelector('#diagram g[data-state-id="s_succeeded"].sc-current');
    for (const state of ['s_thinking', 's_doing', 's_validating']) {
      const classes = await stateClasses(page, state);
      expect(classes, state).toContain('sc-visited');
      expect(classes, state).not.toContain('sc-current');
    }
    expect(await stateClasses(page, 's_failed')).not.toContain('sc-visited');
    await page.waitForSelector('#run-status[data-status="succeeded"]');
    expect(await page.locator('#timeline .track.model').count()).toBe(2);
    expect(await page.locator('#timeline .track.tool').count()).toBe(1);
    expect(await page.locator('#timeline .track.open').count()).toBe(0);
    const labels = await page.locator('#timeline .row-label').allTextContents();
    expect(labels).toEqual([
      '#1 generation 1 120 → 15 tok',
      'add ✓',
      '#2 generation 2 160 → 9 tok',
    ]);
    const figure = (name: string) => page.locator(`[data-figure="${name}"] dd`).textContent();
    expect(await figure('tokens in')).toBe('280');
    expect(await figure('tokens out')).toBe('24');
    expect(await figure('model calls')).toBe('2');
    expect(await page.locator('#states li').allTextContents()).toEqual([
      'thinking',
      'doing',
      'thinking',
      'validating',
      'succeeded',
    ]);
    expect(errors).toEqual([]);
  }, 30_000);

  it('a page left open while the viewer restarts on its port shows the new runs only', async () => {
    const { viewer, page, errors } = await openViewer();
    await page.waitForSelector('#connection[data-state="live"]');
    const chain = (name: string) =>
      createChain({ name, model: new ScriptedModel([{ text: 'hi' }]) });
    for (const name of ['old-1', 'old-2', 'old-3']) {
      await chain(name).invoke('x', { observers: viewer.observer });
    }
    await page.waitForSelector('#runs .run-item >> text=old-3');
    await viewers.splice(viewers.indexOf(viewer), 1)[0]?.close();
    await page.waitForSelector('#connection[data-state="lost"]');

    // A new viewer process on the same port: its event numbers start at 1 again.
    const restarted = await startViewer({ port: viewer.port });
    viewers.push(restarted);
    await chain('new-run').invoke('x', { observers: restarted.observer });
    // The page reconnects by itself (retry: 1000), is told to reset, and replays the new runs.
    await page.waitForSelector('#runs .run-item >> text=new-run', { timeout: 10_000 });
    expect(await page.locator('#runs .run-item .name').allTextContents()).toEqual(['new-run']);
    await page.waitForSelector('#diagram[data-rendered="true"]');
    expect(await page.locator('#run-name').textContent()).toBe('new-run');
    expect(errors).toEqual([]);
  }, 30_000);

  it('a page opened after a composed run shows its tree; the README screenshot', async () => {
    const { app, ticket } = triagePipeline();
    const viewer = await startViewer({ port: 0 });
    viewers.push(viewer);
    const reply = await app.invoke(ticket, {
      observers: viewer.observer,
      runName: `triage ${ticket.id}`,
    });
    expect(reply.text).toContain('refunding the duplicate charge');

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(viewer.url);
    // Replayed: the sequence, and its steps nested under it in the order they ran.
    await page.waitForSelector('#runs .run-item[data-run-id] >> text=draft');
    const tree = await page.locator('#runs > li > ul > li > .run-item .name').allTextContents();
    expect(tree).toEqual(['ticket', 'classify', 'brief', 'research', 'findings', 'draft']);

    await page.locator('#runs .run-item', { hasText: 'research' }).last().click();
    await page.waitForSelector('#diagram[data-rendered="true"]');
    expect(await page.locator('#run-name').textContent()).toBe('research');
    expect(await stateClasses(page, 's_done')).toContain('sc-current');
    for (const state of ['s_running__planning', 's_running__executing', 's_running__responding']) {
      expect(await stateClasses(page, state), state).toContain('sc-visited');
    }
    const tools = await page.locator('#timeline .row-label.tool').allTextContents();
    expect(tools.map((t) => t.trim())).toEqual(['lookup_order ✓', 'search_kb ✓', 'read_article ✓']);
    expect(await page.locator('#timeline .track.model').count()).toBe(4);
    expect(errors).toEqual([]);

    // docs/viewer.png, shown in the README, is rewritten only on request: every run's timings
    // differ, and a screenshot that changed with each `npm test` would churn the repository.
    const scratch = process.env.UPDATE_SCREENSHOTS
      ? undefined
      : await mkdtemp(join(tmpdir(), 'statecraft-viewer-'));
    const path = scratch ? join(scratch, 'viewer.png') : 'docs/viewer.png';
    try {
      await page.screenshot({ path });
      const png = await readFile(path);
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
  }, 30_000);
});
