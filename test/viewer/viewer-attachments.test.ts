// The run viewer and attachments: the feed sends the images and files of a run's input and of
// its tools' results as type, name and size, with a data: URL thumbnail for a small inline
// image only (never a large one's bytes); the page, in headless Chromium, draws the thumbnails
// from those data: URLs and lists the rest by name, type and size, fetching no URL.
import type { Browser } from 'playwright-core';
import { attachment, createChain, defineTool, toolOutput, userMessage } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RunFeed, THUMBNAIL_BYTES } from '../../src/viewer/run-feed.js';
import { startViewer } from '../../src/viewer/server.js';
import { launchChromium } from '../support/chromium.js';

// A 1×1 PNG Chromium decodes.
const dot = attachment({
  data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  name: 'dot.png',
});
const big = attachment({
  data: new Uint8Array(THUMBNAIL_BYTES + 1)
    .fill(7, 8)
    .fill(0x89, 0, 1)
    .fill(0x50, 1, 2)
    .fill(0x4e, 2, 3)
    .fill(0x47, 3, 4),
  name: 'photo.png',
});
const pdf = attachment({ data: 'JVBERi0xLjQK', name: 'report.pdf' });
const linked = attachment({ url: 'https://example.com/chart.png' });

const screenshot = defineTool({
  name: 'screenshot',
  description: 'Takes screenshots',
  input: z.object({}),
  execute: async () => toolOutput({ taken: 4 }, [dot, big, pdf, linked]),
});

const chain = () =>
  createChain({
    name: 'looker',
    model: new ScriptedModel([
      { toolCalls: [{ name: 'screenshot', arguments: {} }] },
      { text: 'Four things.' },
    ]),
    tools: [screenshot],
  });
const input = { messages: [userMessage('What is on my screen?', [dot])] };

describe('attachments in the viewer feed', () => {
  it('sends summaries, and thumbnails of small inline images only', async () => {
    const feed = new RunFeed();
    await chain().invoke(input, { observers: feed.observer });
    const events = feed.history().map((entry) => entry.event);
    const start = events.find((event) => event.type === 'run-start');
    const thumbnail = `data:image/png;base64,${dot.data}`;
    expect(start?.type === 'run-start' && start.attachments).toEqual([
      { mediaType: 'image/png', name: 'dot.png', size: 70, thumbnail },
    ]);
    const end = events.find((event) => event.type === 'tool-call-end');
    expect(end?.type === 'tool-call-end' && end.attachments).toEqual([
      { mediaType: 'image/png', name: 'dot.png', size: 70, thumbnail },
      { mediaType: 'image/png', name: 'photo.png', size: THUMBNAIL_BYTES + 1 },
      { mediaType: 'application/pdf', name: 'report.pdf', size: 9 },
      { mediaType: 'image/png', size: 0, url: 'https://example.com/chart.png' },
    ]);
    expect(JSON.stringify(events)).not.toContain(big.data?.slice(0, 200));
  });
});

describe('attachments on the viewer page, in a browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('draws thumbnails from data: URLs and lists the other files', async () => {
    const viewer = await startViewer({ port: 0 });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.route(
        (url) => url.protocol !== 'data:' && url.origin !== new URL(viewer.url).origin,
        (route) => {
          errors.push(`requested ${route.request().url()}`);
          return route.abort();
        },
      );
      await page.goto(viewer.url);
      await page.waitForSelector('#connection[data-state="live"]');
      await chain().invoke(input, { observers: viewer.observer });
      await page.waitForSelector('#run-status[data-status="succeeded"]');
      await page.waitForSelector('#attachments-panel:not([hidden])');

      const items = page.locator('#attachments .attachment');
      expect(await items.count()).toBe(5);
      expect(await page.locator('#attachments .from').allTextContents()).toEqual([
        'input',
        'screenshot',
        'screenshot',
        'screenshot',
        'screenshot',
      ]);
      expect(await page.locator('#attachments .caption').allTextContents()).toEqual([
        'dot.png · image/png · 70 B',
        'dot.png · image/png · 70 B',
        'photo.png · image/png · 256.0 KB',
        'report.pdf · application/pdf · 9 B',
        'image/png · https://example.com/chart.png',
      ]);
      // Two thumbnails, decoded by the browser from their data: URLs.
      const widths = await page
        .locator('#attachments img.thumb')
        .evaluateAll((images) =>
          images.map((image) => (image as unknown as { naturalWidth: number }).naturalWidth),
        );
      expect(widths).toEqual([1, 1]);
      expect(await page.locator('#attachments .file-icon').allTextContents()).toEqual([
        'png',
        'pdf',
        'png',
      ]);
      const tool = await page.locator('#timeline .row-label.tool').allTextContents();
      expect(tool).toEqual(['screenshot ✓ +4']);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await viewer.close();
    }
  }, 60_000);
});
