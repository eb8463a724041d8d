// SPEC Q5: the inspector bridge (`statecraft run --inspect`, examples/inspect.ts) keeps runs on
// this machine. It listens on 127.0.0.1 only; it answers its own page and programs here, and
// refuses a web page from anywhere else (a foreign Origin) and DNS rebinding (a foreign Host).
import { request } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createChain } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type InspectorBridge, startInspectorBridge } from '../../src/cli/inspector-bridge.js';

const bridges: InspectorBridge[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  for (const bridge of bridges.splice(0)) await bridge.stop();
});

async function bridge(): Promise<InspectorBridge> {
  const started = await startInspectorBridge({ port: 0, open: false });
  bridges.push(started);
  return started;
}

/** Opens a WebSocket to the bridge with these headers: 'open', or the HTTP status refused with. */
function handshake(port: number, headers: Record<string, string>): Promise<number | 'open'> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`, { headers });
  sockets.push(socket);
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve('open'));
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.once('error', reject);
  });
}

/** A GET of the page with this Host header: the status and the body. */
function page(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const get = request({ host: '127.0.0.1', port, path: '/', headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    get.once('error', reject);
    get.end();
  });
}

/** The error code of a TCP connection to `host:port`, or 'connected'. */
function tcpConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

describe('the inspector bridge (SPEC Q5)', () => {
  it('listens on 127.0.0.1 only, not on every interface', async () => {
    const { port, url, address } = await bridge();
    expect(address()).toEqual({ address: '127.0.0.1', family: 'IPv4', port });
    expect(url).toBe(`http://127.0.0.1:${port}`);
    // This machine's other addresses, where it has any, do not reach it.
    const elsewhere = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry !== undefined && !entry.internal && entry.family === 'IPv4')
      .map((entry) => entry?.address as string);
    for (const host of elsewhere) expect(await tcpConnect(host, port)).toBe('ECONNREFUSED');
  });

  it('refuses a WebSocket from a foreign Origin, or for a foreign Host', async () => {
    const { port } = await bridge();
    const host = `127.0.0.1:${port}`;
    expect(await handshake(port, { origin: 'http://evil.example' })).toBe(403);
    expect(await handshake(port, { origin: 'https://stately.ai' })).toBe(403);
    // Another local page is another origin: a different port, or a file (Origin: null).
    expect(await handshake(port, { origin: `http://localhost:${port + 1}` })).toBe(403);
    expect(await handshake(port, { origin: 'null' })).toBe(403);
    expect(await handshake(port, { origin: `https://${host}` })).toBe(403);
    // DNS rebinding: evil.example resolved to 127.0.0.1, its page sends its own name and origin.
    expect(
      await handshake(port, {
        host: `evil.example:${port}`,
        origin: `http://evil.example:${port}`,
      }),
    ).toBe(403);
    expect(await handshake(port, { host: `evil.example:${port}` })).toBe(403);
  });

  it("accepts its own page on 127.0.0.1 or localhost, and programs here (no Origin), and relays the runs' events to them", async () => {
    const { port, inspect } = await bridge();
    expect(await handshake(port, { origin: `http://127.0.0.1:${port}` })).toBe('open');
    expect(await handshake(port, { origin: `http://localhost:${port}` })).toBe('open');
    expect(await handshake(port, { host: `localhost:${port}` })).toBe('open');
    // ws sends no Origin unless told to, as @statelyai/inspect's Node client.
    expect(await handshake(port, {})).toBe('open');

    const [pageSocket] = sockets;
    const states: unknown[] = [];
    const succeeded = new Promise<void>((resolve) => {
      pageSocket?.on('message', (data) => {
        const event = JSON.parse(String(data)) as { type: string; snapshot?: { value?: unknown } };
        if (event.type !== '@xstate.snapshot') return;
        states.push(event.snapshot?.value);
        if (event.snapshot?.value === 'succeeded') resolve();
      });
    });
    const chain = createChain({ model: new ScriptedModel([{ text: 'hello' }]) });
    await chain.invoke('hi', { inspect });
    await succeeded;
    expect(states).toContain('thinking');
  });

  it('serves its page for 127.0.0.1 and localhost only', async () => {
    const { port } = await bridge();
    const own = await page(port, `localhost:${port}`);
    expect(own.status).toBe(200);
    expect(own.body).toContain('src="https://stately.ai/inspect"');
    // The page connects back to the name it was loaded from.
    expect(own.body).toContain("new WebSocket('ws://' + location.host)");
    expect((await page(port, `127.0.0.1:${port}`)).status).toBe(200);
    expect((await page(port, `evil.example:${port}`)).status).toBe(403);
    expect((await page(port, 'evil.example')).status).toBe(403);
  });

  it('stops: closes the pages still connected and stops listening', async () => {
    const started = await startInspectorBridge({ port: 0, open: false });
    expect(await handshake(started.port, {})).toBe('open');
    const closed = new Promise((resolve) => sockets[0]?.once('close', resolve));
    await started.stop();
    expect(await closed).toBe(1001);
    expect(await tcpConnect('127.0.0.1', started.port)).toBe('ECONNREFUSED');
  });
});
