// The run viewer's server without a browser (SPEC X4): its page and Mermaid come from this
// machine, run events stream as Server-Sent Events that a late page gets replayed, and bad
// options fail with errors that name them.
import { request } from 'node:http';
import { ConfigError, createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startViewer, type Viewer } from '../../src/viewer/server.js';
import type { StreamEvent } from '../../src/viewer/viewer-events.js';

const viewers: Viewer[] = [];
afterEach(async () => {
  await Promise.all(viewers.splice(0).map((viewer) => viewer.close()));
});

async function viewer(): Promise<Viewer> {
  const started = await startViewer({ port: 0 });
  viewers.push(started);
  return started;
}

function addingChain() {
  const add = defineTool({
    name: 'add',
    description: 'Adds two numbers.',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
  });
  return createChain({
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
}

interface Received {
  /** `<boot>-<seq>`: which viewer process sent it, and its number there. */
  readonly id: string;
  readonly event: StreamEvent;
}

const seqOf = (id: string) => Number(id.split('-')[1]);
const bootOf = (id: string) => id.split('-')[0];

/** An open /events stream: what it received so far, and a wait for a matching event. */
function openEvents(url: string, headers: Record<string, string> = {}) {
  const received: Received[] = [];
  const waiters = new Set<{ test: (r: Received) => boolean; resolve: () => void }>();
  let ended = false;
  const endWaiters: (() => void)[] = [];
  let buffer = '';
  const opened = new Promise<void>((resolve, reject) => {
    const req = request(new URL('/events', url), { headers, agent: false }, (response) => {
      expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          const id = /^id: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id === undefined || data === undefined) continue;
          const entry = { id, event: JSON.parse(data) as StreamEvent };
          received.push(entry);
          for (const waiter of waiters) {
            if (waiter.test(entry)) {
              waiters.delete(waiter);
              waiter.resolve();
            }
          }
        }
      });
      response.on('end', () => {
        ended = true;
        for (const resolve of endWaiters) resolve();
      });
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
  return {
    received,
    opened,
    until(test: (r: Received) => boolean): Promise<void> {
      if (received.some(test)) return Promise.resolve();
      return new Promise((resolve) => waiters.add({ test, resolve }));
    },
    ended: () => (ended ? Promise.resolve() : new Promise<void>((r) => endWaiters.push(r))),
  };
}

async function get(url: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request(new URL(path, url), { headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          type: String(response.headers['content-type']),
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const isRunEnd = (runId: string) => (r: Received) =>
  r.event.type === 'run-end' && r.event.runId === runId;

describe('the run viewer server (SPEC X4)', () => {
  it('listens on 127.0.0.1 and serves its page and Mermaid from this machine', async () => {
    const { url, port } = await viewer();
    expect(url).toBe(`http://127.0.0.1:${port}/`);
    const page = await get(url, '/');
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    // Every script and stylesheet the page loads is a local path: nothing from a CDN.
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources).toEqual(['data:,', '/viewer.css', '/mermaid.min.js', '/viewer.js']);
    const mermaid = await get(url, '/mermaid.min.js');
    expect(mermaid.status).toBe(200);
    expect(mermaid.type).toMatch(/^text\/javascript/);
    expect(mermaid.body.length).toBeGreaterThan(1_000_000);
    expect((await get(url, '/viewer.js')).body).toContain("new EventSource('/events')");
    expect((await get(url, '/nope')).status).toBe(404);
    // A page on another origin whose name resolves to 127.0.0.1 (DNS rebinding) is refused.
    expect((await get(url, '/', { host: 'evil.example:80' })).status).toBe(403);
  });

  it('replays earlier runs to a late page, then streams new ones live', async () => {
    const { url, observer } = await viewer();
    const first = await addingChain().invoke('2 + 3?', { observers: observer });
    expect(first.text).toBe('The sum is 5.');

    // Opened after the run ended: the page is sent everything that happened.
    const late = openEvents(url);
    await late.opened;
    await late.until((r) => r.event.type === 'run-end');
    const events = late.received.map((r) => r.event);
    const start = events.find((e) => e.type === 'run-start');
    if (start?.type !== 'run-start') throw new Error('no run-start was replayed');
    expect(start).toMatchObject({ name: 'adder', kind: 'chain' });
    expect(start.parentRunId).toBeUndefined();
    expect(start.model).toEqual({ provider: 'scripted', modelId: 'scripted-model' });
    // The diagram comes before the run that draws it, with the Mermaid node ids of its states.
    const diagram = events.find((e) => e.type === 'diagram');
    if (diagram?.type !== 'diagram') throw new Error('no diagram was replayed');
    expect(events.indexOf(diagram)).toBeLessThan(events.indexOf(start));
    expect(start.diagramId).toBe(diagram.diagramId);
    expect(diagram.plain).toMatch(/^stateDiagram-v2/m);
    expect(diagram.plain).toContain('s_thinking --> s_doing');
    expect(diagram.labelled).toContain('s_thinking --> s_doing : callModel.done [canDo]');

    const states = events.flatMap((e) => (e.type === 'state' ? [e.value] : []));
    expect(states).toEqual(expect.arrayContaining(['thinking', 'doing', 'succeeded']));
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'state', value: 'doing', nodeIds: ['s_doing'] }),
    );
    const usages = events.flatMap((e) => (e.type === 'model-call-end' ? [e.usage] : []));
    expect(usages).toEqual([
      expect.objectContaining({ inputTokens: 120, outputTokens: 15 }),
      expect.objectContaining({ inputTokens: 160, outputTokens: 9 }),
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool-call-start', name: 'add', arguments: '{"a":2,"b":3}' }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'tool-call-end', ok: true, preview: '5' }),
    );
    expect(events.at(-1)).toMatchObject({
      type: 'run-end',
      status: 'succeeded',
      usage: { inputTokens: 280, outputTokens: 24 },
    });
    // Numbered in order, and named by this viewer process: the ids a reconnecting page sends back.
    const ids = late.received.map((r) => r.id);
    expect(ids.map(seqOf)).toEqual(ids.map((_, i) => i + 1));
    expect(new Set(ids.map(bootOf)).size).toBe(1);
    expect(ids[0]).toMatch(/^[0-9a-f]+-1$/);

    // A second run streams live to the page that is open.
    await addingChain().invoke('2 + 3?', { observers: observer });
    await late.until((r) => r.event.type === 'run-start' && r.event.runId !== start.runId);
    const secondStart = late.received.findLast((r) => r.event.type === 'run-start')?.event;
    if (secondStart?.type !== 'run-start') throw new Error('the second run did not stream');
    await late.until(isRunEnd(secondStart.runId));
    const diagrams = late.received.filter((r) => r.event.type === 'diagram');
    // Each chain has its own machine (its actors provided), but they draw the same diagram.
    expect(diagrams).toHaveLength(1);
  });

  it('a reconnecting page gets only what it missed (Last-Event-ID)', async () => {
    const { url, observer } = await viewer();
    await addingChain().invoke('2 + 3?', { observers: observer });
    const all = openEvents(url);
    await all.until((r) => r.event.type === 'run-end');
    const cut = all.received[2]?.id ?? '';
    const resumed = openEvents(url, { 'last-event-id': cut });
    await resumed.until((r) => r.event.type === 'run-end');
    expect(resumed.received.map((r) => r.id)).toEqual(all.received.slice(3).map((r) => r.id));
  });

  it('a page that resumes from a restarted viewer (same port) is told to reset, then sent everything', async () => {
    const first = await startViewer({ port: 0 });
    await addingChain().invoke('2 + 3?', { observers: first.observer });
    const before = openEvents(first.url);
    await before.until((r) => r.event.type === 'run-end');
    const lastSeen = before.received.at(-1)?.id ?? '';
    await first.close();

    // The same port, a new process's viewer: its own numbers start at 1 again.
    const second = await startViewer({ port: first.port });
    viewers.push(second);
    await createChain({ name: 'after restart', model: new ScriptedModel([{ text: 'hi' }]) }).invoke(
      'x',
      { observers: second.observer },
    );
    const fresh = openEvents(second.url);
    await fresh.until((r) => r.event.type === 'run-end');
    expect(seqOf(lastSeen)).toBeGreaterThan(fresh.received.length); // the old number is ahead

    const resumed = openEvents(second.url, { 'last-event-id': lastSeen });
    await resumed.until((r) => r.event.type === 'run-end');
    const [reset, ...rest] = resumed.received;
    expect(reset?.event).toEqual({ type: 'reset' });
    expect(rest.map((r) => r.id)).toEqual(fresh.received.map((r) => r.id));
    expect(rest.map((r) => r.event)).toContainEqual(
      expect.objectContaining({ type: 'run-start', name: 'after restart' }),
    );
    // The reset's own id resumes from the start of this viewer's events.
    expect(bootOf(reset?.id ?? '')).toBe(bootOf(fresh.received[0]?.id ?? ''));
    expect(seqOf(reset?.id ?? '')).toBe(0);

    // A number this viewer has not reached, or an id that is not one, starts over too; a page
    // without a Last-Event-ID is new and needs no reset.
    const boot = bootOf(fresh.received[0]?.id ?? '');
    for (const id of [`${boot}-${fresh.received.length + 5}`, 'nonsense']) {
      const stream = openEvents(second.url, { 'last-event-id': id });
      await stream.until((r) => r.event.type === 'run-end');
      expect(stream.received[0]?.event, id).toEqual({ type: 'reset' });
      expect(stream.received).toHaveLength(fresh.received.length + 1);
    }
    expect(fresh.received[0]?.event.type).not.toBe('reset');
  });

  it('close() ends the open event streams and stops listening', async () => {
    const started = await startViewer({ port: 0 });
    const stream = openEvents(started.url);
    await stream.opened;
    await started.close();
    await stream.ended();
    await expect(get(started.url, '/')).rejects.toThrow(/ECONNREFUSED/);
  });

  it.each([
    [{ port: -1 }, 'port'],
    [{ port: 65_536 }, 'port'],
    [{ port: 80.5 }, 'port'],
    [{ port: '4319' }, 'port'],
    [{ host: '0.0.0.0' }, 'host'],
    [{ keepRuns: 0 }, 'keepRuns'],
  ])('rejects %o with a ConfigError naming `%s`', async (options, option) => {
    const error = await startViewer(options as never).catch((e: unknown) => e);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).option).toBe(option);
    expect((error as Error).message).toContain(`\`${option}\``);
  });

  it('a port in use is a clear error', async () => {
    const { port } = await viewer();
    await expect(startViewer({ port })).rejects.toThrow(
      `The viewer cannot listen on 127.0.0.1:${port}: the port is in use. Choose another port, or 0 for any free one.`,
    );
  });
});
