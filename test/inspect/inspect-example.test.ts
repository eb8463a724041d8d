// examples/inspect.ts, smoke-tested as a user runs it: it starts the local inspector bridge on
// 127.0.0.1, runs a chain with @statelyai/inspect's WebSocket inspector, and the bridge hands
// the run's events to its page (here a client with the page's Origin), and to no other web
// page (SPEC Q5). Ctrl-C ends it. A busy port is one line, not a stack trace.
import { execFile, spawn } from 'node:child_process';
import { connect, createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A port nobody listens on right now (the example takes a fixed port, not 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
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

const EXAMPLE = ['--conditions=statecraft-source', '--import', 'tsx', 'examples/inspect.ts'];

describe('examples/inspect.ts', () => {
  it('streams the chain run to the local inspector bridge, and stops on Ctrl-C', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...EXAMPLE, '--no-open', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => child.exitCode === null && child.kill('SIGKILL'));
    let stdout = '';
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('press Ctrl-C')) resolve();
      });
      child.on('exit', () => reject(new Error(`the example exited early: ${stdout}`)));
    });
    await ready;
    expect(stdout).toContain(`Stately inspector: http://127.0.0.1:${port}`);
    expect(stdout).toContain('result: { answer: 5 }');
    // The bridge listens on the loopback interface only: this machine's other addresses, where
    // it has any, do not reach it.
    const elsewhere = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry !== undefined && !entry.internal && entry.family === 'IPv4')
      .map((entry) => entry?.address as string);
    for (const host of elsewhere) expect(await tcpConnect(host, port)).toBe('ECONNREFUSED');
    // A web page from elsewhere is refused.
    const evil = new WebSocket(`ws://127.0.0.1:${port}`, { origin: 'http://evil.example' });
    cleanups.push(() => evil.terminate());
    const refused = await new Promise((resolve, reject) => {
      evil.once('open', () => resolve('open'));
      evil.once('unexpected-response', (_request, response) => resolve(response.statusCode));
      evil.once('error', reject);
    });
    expect(refused).toBe(403);

    // Its own page, opened after the run: the bridge replays what it holds.
    const socket = new WebSocket(`ws://127.0.0.1:${port}`, { origin: `http://localhost:${port}` });
    cleanups.push(() => socket.terminate());
    const values: unknown[] = [];
    await new Promise<void>((resolve) => {
      socket.on('message', (data) => {
        const event = JSON.parse(String(data));
        if (event.type === '@xstate.snapshot') values.push(event.snapshot.value);
        if (event.snapshot?.value === 'succeeded') resolve();
      });
    });
    expect(values).toEqual(
      expect.arrayContaining(['thinking', 'doing', 'validating', 'succeeded']),
    );
    socket.close();
    await new Promise((resolve) => socket.once('close', resolve));

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 30_000);

  it('says in one line, with no stack trace, that its port is busy and how to choose another', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => taken.close());
    const { port } = taken.address() as { port: number };
    const run = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [...EXAMPLE, '--no-open', ...args],
          (error, stdout, stderr) =>
            resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
        cleanups.push(() => child.exitCode === null && child.kill('SIGKILL'));
      });
    const [busy, bad] = await Promise.all([run('--port', String(port)), run('--port', 'http')]);
    expect(busy).toEqual({
      code: 1,
      stdout: '',
      stderr: `npm run inspect: port ${port} is busy (something else listens on it): choose another with --port, e.g. npm run inspect -- --port ${port + 1}\n`,
    });
    expect(bad).toEqual({
      code: 1,
      stdout: '',
      stderr: 'npm run inspect: --port must be a port number (1-65535), got http\n',
    });
  }, 30_000);
});
