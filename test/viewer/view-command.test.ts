// `statecraft view <example>` as a user runs it: a separate process that prints the viewer's
// URL, runs the example, streams its runs to the page, and stays up until Ctrl-C (or, with
// --exit, closes when the example is done). Bad input ends it with a clear message.
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function cli(...args: string[]) {
  return cliWith({}, ...args);
}

/** The CLI with extra environment variables, and a stdin the test can write to. */
function cliWith(env: Record<string, string>, ...args: string[]) {
  const child = spawn(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', 'src/cli/main.ts', ...args],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, STATECRAFT_DEBUG: '', ...env } },
  );
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    /** Resolves with the first match of `pattern` in the stream, as soon as it appears. */
    waitFor(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpExecArray> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stream === 'stdout' ? stdout : stderr);
          if (match) resolve(match);
          return match;
        };
        if (check()) return;
        child[stream]?.on('data', check);
        child.on('exit', () => {
          if (!check()) reject(new Error(`exited without ${pattern}: ${stdout}\n${stderr}`));
        });
      });
    },
  };
}

/** The run events the viewer at `url` has, up to the first `run-end`. */
function eventsUntilRunEnd(
  url: string,
  onConnected: () => void = () => {},
): Promise<{ type: string; value?: string; name?: string; status?: string }[]> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/events', url), { agent: false }, (response) => {
      onConnected();
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] ?? ''));
        if (events.some((e) => e.type === 'run-end')) {
          resolve(events);
          req.destroy();
        }
      });
      response.on('end', () => reject(new Error(`the viewer closed before a run ended: ${text}`)));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('statecraft view', () => {
  it('serves the example’s runs and stays up until Ctrl-C', async () => {
    const run = cli('view', 'quickstart', '--port', '0', '--no-open');
    const [, url = ''] = await run.waitFor(
      'stdout',
      /^statecraft view: (http:\/\/127\.0\.0\.1:\d+\/)$/m,
    );
    await run.waitFor('stderr', /serving until Ctrl-C/);
    // The example's own output is there, and its chain reached the page's event stream.
    expect(run.output().stdout).toContain('result: { answer: 5 }');
    const events = await eventsUntilRunEnd(url);
    expect(events.filter((e) => e.type === 'state').map((e) => e.value)).toEqual(
      expect.arrayContaining(['thinking', 'doing', 'validating', 'succeeded']),
    );
    expect(events.filter((e) => e.type === 'tool-call-end')).toHaveLength(2);

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  }, 30_000);

  it('--exit closes the viewer when the example is done', async () => {
    const run = cli('view', 'examples/quickstart.ts', '--port', '0', '--no-open', '--exit');
    expect(await run.exited).toBe(0);
    const { stdout, stderr } = run.output();
    expect(stdout).toMatch(/^statecraft view: http:\/\/127\.0\.0\.1:\d+\/$/m);
    expect(stderr).toContain('statecraft view: examples/quickstart.ts finished');
  }, 30_000);

  it('a script that fails: reported, its run still served, exit code 1 on Ctrl-C', async () => {
    const run = cli('view', 'test/cli/fixtures/failing-run.ts', '--port', '0', '--no-open');
    const [, url = ''] = await run.waitFor(
      'stdout',
      /^statecraft view: (http:\/\/127\.0\.0\.1:\d+\/)$/m,
    );
    await run.waitFor('stderr', /serving until Ctrl-C/);
    expect(run.output().stderr).toContain(
      'statecraft view: the script failed: the agent gave a wrong answer: 4\n',
    );
    expect(run.output().stderr).not.toContain('loading');
    const events = await eventsUntilRunEnd(url);
    expect(events).toContainEqual(expect.objectContaining({ type: 'run-start', name: 'doomed' }));
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'run-end', status: 'succeeded' }),
    );

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(1);
  }, 30_000);

  it('--exit with a script that fails: exit code 1, and its stack with STATECRAFT_DEBUG=1', async () => {
    const run = cliWith(
      { STATECRAFT_DEBUG: '1' },
      ...['view', 'test/cli/fixtures/failing-run.ts', '--port', '0', '--no-open', '--exit'],
    );
    expect(await run.exited).toBe(1);
    const { stderr } = run.output();
    expect(stderr).toContain('statecraft view: the script failed: the agent gave a wrong answer');
    expect(stderr).toMatch(/\n\s+at .*failing-run\.ts:\d+:\d+/);
    expect(stderr).not.toContain('finished');
  }, 30_000);

  it('--exit waits for the runs a script starts without awaiting them', async () => {
    const run = cli(
      'view',
      'test/cli/fixtures/unawaited-run.ts',
      '--port',
      '0',
      '--no-open',
      '--exit',
    );
    const [, url = ''] = await run.waitFor(
      'stdout',
      /^statecraft view: (http:\/\/127\.0\.0\.1:\d+\/)$/m,
    );
    await run.waitFor('stdout', /waiting for a line on stdin/);
    // The script's import has resolved; its run has not started. The viewer must still be up:
    // a page connects, then the script gets its go-ahead.
    const events = eventsUntilRunEnd(url, () => run.child.stdin?.end('go\n'));
    expect(await events).toContainEqual(
      expect.objectContaining({ type: 'run-end', status: 'succeeded' }),
    );
    expect(await run.exited).toBe(0);
    expect(run.output().stdout).toContain('result: succeeded');
    expect(run.output().stderr).toContain(
      'statecraft view: test/cli/fixtures/unawaited-run.ts finished',
    );
  }, 30_000);

  it('a script whose unawaited main() rejects later: reported as its failure, exit code 1', async () => {
    const run = cli(
      ...['view', 'test/cli/fixtures/unawaited-failure.ts', '--port', '0', '--no-open', '--exit'],
    );
    expect(await run.exited).toBe(1);
    const { stderr } = run.output();
    expect(stderr).toContain(
      'statecraft view: the script failed: the check after the run failed\n',
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it.each([
    [['view', 'quickstart', '--port', 'abc'], '--port must be a whole number from 0 to 65535.'],
    [['view', 'quickstart', '--port', '70000'], '--port must be a whole number from 0 to 65535.'],
    [['view', 'no-such-example', '--no-open'], 'no example named "no-such-example"'],
    [['view'], "missing required argument 'example'"],
  ])(
    '%j fails with a clear message',
    async (args, message) => {
      const run = cli(...args);
      expect(await run.exited).toBe(1);
      expect(run.output().stderr).toContain(message);
    },
    30_000,
  );
});
