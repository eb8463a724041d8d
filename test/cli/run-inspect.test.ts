// `statecraft run --inspect` (SPEC D1), spawned as `npm run statecraft` runs it: the CLI starts
// @statelyai/inspect's local bridge, and the test connects to it on 127.0.0.1 as the page that
// embeds the Stately inspector does. The run's states must reach that page before the bridge
// closes, and the CLI must end by itself, a page still connected.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CliError } from '../../src/cli/cli-error.js';
import { startInspectorBridge } from '../../src/cli/inspector-bridge.js';

const CLI = ['--conditions=statecraft-source', '--import', 'tsx', 'src/cli/main.ts'];

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A port nobody listens on right now (the bridge's page names its port, so it cannot be 0), on
 * every interface: the bridge listens on all of them.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function statecraft(...args: string[]): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, STATECRAFT_DEBUG: '' },
  });
  cleanups.push(() => child.exitCode === null && child.kill('SIGKILL'));
  return child;
}

/** Everything a stream prints, and a promise for the first time it prints `text`. */
function reader(stream: NodeJS.ReadableStream) {
  let text = '';
  const waiting: { text: string; resolve: () => void }[] = [];
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    text += chunk;
    for (const waiter of waiting.filter((w) => text.includes(w.text))) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  return {
    text: () => text,
    printed: (expected: string) =>
      text.includes(expected)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiting.push({ text: expected, resolve })),
  };
}

interface StatelyMessage {
  readonly type: string;
  readonly name?: string;
  readonly snapshot?: { readonly value?: unknown };
}

describe('statecraft run --inspect', () => {
  it("sends the runs' inspection events to the bridge's page, then stops the bridge and exits 0", async () => {
    const port = await freePort();
    const child = statecraft(
      'run',
      'test/cli/fixtures/inspected-chain.ts',
      '--inspect',
      '--inspect-port',
      String(port),
      '--no-open',
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const stdout = reader(child.stdout);
    const stderr = reader(child.stderr);
    await Promise.race([
      stdout.printed('waiting for a line on stdin'),
      exited.then(() => {
        throw new Error(`the CLI exited early: ${stderr.text()}`);
      }),
    ]);
    expect(stderr.text()).toContain(
      `statecraft run: Stately inspector at http://127.0.0.1:${port}`,
    );

    // The page, connected before the run starts: it sees the run live, as it happens.
    const page = new WebSocket(`ws://127.0.0.1:${port}`);
    cleanups.push(() => page.terminate());
    const received: StatelyMessage[] = [];
    page.on('message', (data) => received.push(JSON.parse(String(data)) as StatelyMessage));
    const pageClosed = new Promise((resolve) => page.once('close', resolve));
    await new Promise((resolve) => page.once('open', resolve));
    child.stdin.write('go\n');

    // The CLI ends by itself, though the page never closes its side.
    expect(await exited).toBe(0);
    await pageClosed;
    expect(stdout.text()).toContain('result: The sum is 5.');
    expect(stderr.text()).toContain('statecraft run: 1 run, 2 model calls, 1 tool call, ');
    // What the run sent just before the example ended reached the page before the bridge closed.
    const states = received.flatMap((m) =>
      m.type === '@xstate.snapshot' ? [m.snapshot?.value] : [],
    );
    expect(states).toEqual(
      expect.arrayContaining(['thinking', 'doing', 'validating', 'succeeded']),
    );
    expect(states.at(-1)).toBe('succeeded');
    expect(received.some((m) => m.type === '@xstate.actor' && m.name === 'chain')).toBe(true);
  }, 60_000);

  it('fails with one clear line when the bridge port is taken, or is not a port', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    cleanups.push(() => taken.close());
    const { port } = taken.address() as { port: number };
    const run = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [...CLI, 'run', 'quickstart', '--inspect', '--no-open', ...args],
          { env: { ...process.env, STATECRAFT_DEBUG: '' } },
          (error, stdout, stderr) =>
            resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
        ),
      );
    const [inUse, notAPort] = await Promise.all([
      run('--inspect-port', String(port)),
      run('--inspect-port', '65536'),
    ]);
    expect(inUse).toEqual({
      code: 1,
      stdout: '',
      stderr: `statecraft run: --inspect-port ${port} is in use: choose another port\n`,
    });
    expect(notAPort.code).toBe(1);
    expect(notAPort.stdout).toBe('');
    expect(notAPort.stderr).toMatch(
      /--inspect-port must be a whole number from 0 \(any free port\) to 65535/,
    );
  }, 60_000);

  it('says in --help that the bridge stays on 127.0.0.1 and refuses foreign Hosts and Origins', async () => {
    const help = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [...CLI, 'run', '--help'], (error, stdout) =>
        error ? reject(error) : resolve(stdout.replace(/\s+/g, ' ')),
      ),
    );
    expect(help).toContain('The bridge listens on 127.0.0.1 only');
    expect(help).toContain('refuses requests with a foreign Host');
    expect(help).toContain('WebSocket connections with a foreign Origin');
  }, 30_000);

  it('names the package to install when @statelyai/inspect cannot be imported', async () => {
    const missing = Object.assign(new Error("Cannot find package '@statelyai/inspect'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const started = startInspectorBridge({
      port: await freePort(),
      open: false,
      load: () => Promise.reject(missing),
    });
    await expect(started).rejects.toBeInstanceOf(CliError);
    await expect(started).rejects.toThrow(
      /the Stately inspector needs @statelyai\/inspect.*npm install @statelyai\/inspect/,
    );
  });
});
