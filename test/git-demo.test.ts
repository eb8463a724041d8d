import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startReplayServer } from './support/replay-server.js';

const run = promisify(execFile);

/** Every variable examples/model-from-env.ts reads, unset: the scripted model runs. */
const NO_PROVIDER = {
  OPENAI_BASE_URL: '',
  OPENAI_API_KEY: '',
  OPENAI_MODEL: '',
  ANTHROPIC_API_KEY: '',
  GEMINI_API_KEY: '',
};

/** A Chat Completions stream, as an OpenAI-compatible server sends it, for one answer. */
function chatStream(answer: {
  text?: string;
  call?: { name: string; arguments: object };
}): string[] {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-demo',
      object: 'chat.completion.chunk',
      created: 1_760_000_000,
      model: 'llama3.2',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  const { text, call } = answer;
  return [
    chunk({ role: 'assistant', content: text ?? '' }, null),
    ...(call
      ? [
          chunk(
            {
              tool_calls: [
                {
                  index: 0,
                  id: `call_${call.name}`,
                  type: 'function',
                  function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                },
              ],
            },
            null,
          ),
        ]
      : []),
    chunk({}, call ? 'tool_calls' : 'stop'),
    'data: [DONE]\n\n',
  ];
}

describe('npm run demo (examples/git-commit.ts)', () => {
  it('commits the change in a temporary repository with real git and prints the run', async () => {
    const { stdout } = await run(
      'node',
      ['--conditions=statecraft-source', '--import', 'tsx', 'examples/git-commit.ts'],
      {
        env: { ...process.env, ...NO_PROVIDER },
      },
    );
    expect(stdout).toContain('Running on the embedded scripted model');
    expect(stdout).toMatch(/→ git_status\(\{\}\)\n {2}M greeting\.txt/);
    expect(stdout).toContain('→ git_diff({"path":"greeting.txt"})');
    expect(stdout).toContain('+Hello, statecharts.');
    expect(stdout).toContain(
      'states: idle → thinking → doing → thinking → doing → thinking → doing → thinking → validating → succeeded',
    );
    // The commit really happened: git log prints the message drawn from the diff and the stat.
    expect(stdout).toMatch(
      /git log -1:\nAdd "Hello, statecharts\." to greeting\.txt\n\n greeting\.txt \| 1 \+/,
    );
  }, 30_000);

  it('runs on an OpenAI-compatible server when OPENAI_BASE_URL and OPENAI_MODEL are set', async () => {
    const server = await startReplayServer([
      { sse: chatStream({ call: { name: 'git_status', arguments: {} } }) },
      { sse: chatStream({ call: { name: 'git_diff', arguments: { path: 'greeting.txt' } } }) },
      {
        sse: chatStream({
          call: { name: 'git_commit', arguments: { message: 'Greet the statecharts' } },
        }),
      },
      { sse: chatStream({ text: 'Committed.' }) },
    ]);
    try {
      const { stdout } = await run(
        'node',
        ['--conditions=statecraft-source', '--import', 'tsx', 'examples/git-commit.ts'],
        {
          env: {
            ...process.env,
            ...NO_PROVIDER,
            OPENAI_BASE_URL: `${server.url}/v1`,
            OPENAI_MODEL: 'llama3.2',
          },
        },
      );
      expect(stdout).toContain(
        `Running on the OpenAI-compatible server at ${server.url}/v1 (llama3.2).`,
      );
      expect(stdout).toContain('answer: Committed.');
      expect(stdout).toMatch(/git log -1:\nGreet the statecharts\n\n greeting\.txt \| 1 \+/);
      expect(server.requests.map((r) => [r.path, (r.body as { model: string }).model])).toEqual(
        Array(4).fill(['/v1/chat/completions', 'llama3.2']),
      );
      // The diff the real tool produced went back to the server as a tool message.
      const third = server.requests[2]?.body as { messages: { role: string; content: string }[] };
      expect(third.messages.at(-1)).toMatchObject({ role: 'tool' });
      expect(third.messages.at(-1)?.content).toContain('+Hello, statecharts.');
    } finally {
      await server.close();
    }
  }, 30_000);

  describe('a provider that cannot be reached', () => {
    /** A port on 127.0.0.1 that was just listened on and closed: connecting is refused. */
    async function closedPort(): Promise<number> {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const { port } = probe.address() as AddressInfo;
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }

    async function failedRun(command: string[], extraEnv: Record<string, string> = {}) {
      const url = `http://127.0.0.1:${await closedPort()}/v1`;
      const env = {
        ...process.env,
        ...NO_PROVIDER,
        OPENAI_BASE_URL: url,
        OPENAI_MODEL: 'llama3.2',
        STATECRAFT_DEBUG: '',
        ...extraEnv,
      };
      const error = await run('node', command, { env }).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      return { url, code: error?.code, stderr: error?.stderr ?? '' };
    }

    const example = ['--conditions=statecraft-source', '--import', 'tsx', 'examples/git-commit.ts'];

    it('prints one line naming the URL and the cause, no stack, and exits 1', async () => {
      const { url, code, stderr } = await failedRun(example);
      expect(code).toBe(1);
      expect(stderr).toBe(`The run failed: could not reach ${url} (connection refused)\n`);
    }, 60_000);

    it('adds the stack and the SDK error under it with STATECRAFT_DEBUG=1', async () => {
      const { url, stderr } = await failedRun(example, { STATECRAFT_DEBUG: '1' });
      const [first, ...rest] = stderr.split('\n');
      expect(first).toBe(`The run failed: could not reach ${url} (connection refused)`);
      expect(rest.join('\n')).toMatch(/\n\s+at /);
      expect(rest.join('\n')).toContain('ECONNREFUSED');
    }, 60_000);

    it('under `statecraft run`, the failure is one line among the progress lines', async () => {
      const { url, code, stderr } = await failedRun([
        '--conditions=statecraft-source',
        '--import',
        'tsx',
        'src/cli/main.ts',
        'run',
        'examples/git-commit.ts',
      ]);
      expect(code).toBe(1);
      expect(stderr).toContain(`The run failed: could not reach ${url} (connection refused)\n`);
      expect(stderr).not.toMatch(/^\s+at /m);
    }, 60_000);
  });
});
