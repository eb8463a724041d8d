// examples/inspect.ts, smoke-tested as a user runs it: it starts @statelyai/inspect's local
// bridge, runs a chain with the WebSocket inspector, and the bridge hands the run's events to
// whoever connects, as it does to the page that embeds the Stately inspector. Ctrl-C ends it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A port nobody listens on right now (the bridge takes a fixed port, not 0), on every
 * interface: the bridge listens on all of them, so a port free on 127.0.0.1 alone may not be.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The error code of listening on `host:port`, or undefined when it could (closed at once). */
function listenError(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    probe.listen(port, host, () => probe.close(() => resolve(undefined)));
  });
}

describe('examples/inspect.ts', () => {
  it('streams the chain run to the local inspector bridge, and stops on Ctrl-C', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        '--conditions=statecraft-source',
        '--import',
        'tsx',
        'examples/inspect.ts',
        '--no-open',
        '--port',
        String(port),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
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
    expect(stdout).toContain(`Stately inspector: http://localhost:${port}`);
    expect(stdout).toContain('result: { answer: 5 }');
    // As the example warns: the bridge holds the port on every interface, not on loopback only.
    expect(await listenError(port, '0.0.0.0')).toBe('EADDRINUSE');

    // Connected after the run, like a page opened late: the bridge replays what it holds.
    const socket = new WebSocket(`ws://127.0.0.1:${port}`);
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
});
