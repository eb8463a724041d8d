// A chain that commits a change in a git repository by running
// `git status`, then `git diff`, then `git commit` with a message drawn from the diff.
// It runs on the embedded scripted model, whose decisions read the real tool results, or on a
// real provider when its variables are set (see model-from-env.ts).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createChain, defineTool, type ModelRequest, type ToolResultMessage } from 'statecraft';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { z } from 'zod';
import { modelFromEnv } from './model-from-env.js';

const exec = promisify(execFile);

/** A throwaway repository with one committed file and an uncommitted change to it. */
async function makeRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'statecraft-git-'));
  const git = (...args: string[]) => exec('git', args, { cwd: dir });
  await git('init', '--quiet', '--initial-branch=main');
  await git('config', 'user.name', 'statecraft demo');
  await git('config', 'user.email', 'demo@statecraft.invalid');
  await writeFile(join(dir, 'greeting.txt'), 'Hello, world.\n');
  await git('add', '.');
  await git('commit', '--quiet', '-m', 'Add greeting');
  await writeFile(join(dir, 'greeting.txt'), 'Hello, world.\nHello, statecharts.\n');
  return dir;
}

function gitTools(dir: string) {
  const git = async (args: string[], signal: AbortSignal) =>
    (await exec('git', args, { cwd: dir, signal })).stdout;
  return [
    defineTool({
      name: 'git_status',
      description: 'Shows which files changed (git status --short).',
      input: z.object({}),
      execute: (_args, { signal }) => git(['status', '--short'], signal),
      bestPractices: ['Run it first, to see what there is to commit.'],
    }),
    defineTool({
      name: 'git_diff',
      description: 'Shows the uncommitted changes (git diff).',
      input: z.object({ path: z.string().optional().describe('Limit the diff to this file') }),
      execute: ({ path }, { signal }) => git(path ? ['diff', '--', path] : ['diff'], signal),
      duplicateCallWarn: true,
    }),
    defineTool({
      name: 'git_commit',
      description: 'Commits all tracked changes with the given message (git commit -am).',
      input: z.object({ message: z.string().min(3) }),
      execute: ({ message }, { signal }) =>
        git(['commit', '--quiet', '-am', message], signal).then(() => 'committed'),
      bestPractices: ['Write the message in the imperative, naming what changed.'],
    }),
  ];
}

/** The scripted model's policy: status → diff → commit, reading what the tools returned. */
function decide(request: ModelRequest): ScriptedTurn {
  const results = [...request.messages].filter((m): m is ToolResultMessage => m.role === 'tool');
  const last = results.at(-1);
  if (!last)
    return {
      text: 'Let me look at the working tree.',
      toolCalls: [{ name: 'git_status', arguments: {} }],
    };
  if (last.name === 'git_status') {
    const file = String(last.output).trim().split(/\s+/).at(-1) ?? '';
    return { toolCalls: [{ name: 'git_diff', arguments: { path: file } }] };
  }
  if (last.name === 'git_diff') {
    const diff = String(last.output);
    const file = /^\+\+\+ b\/(.+)$/m.exec(diff)?.[1] ?? 'files';
    const added = /^\+(?!\+\+)(.*)$/m.exec(diff)?.[1]?.trim() ?? 'a line';
    return {
      toolCalls: [{ name: 'git_commit', arguments: { message: `Add "${added}" to ${file}` } }],
    };
  }
  return { text: last.success ? 'Committed the change.' : `The commit failed: ${last.error}` };
}

const dir = await makeRepository();
try {
  const chosen = await modelFromEnv();
  if (chosen) console.log(`Running on ${chosen.description}.\n`);
  else console.log('Running on the embedded scripted model (no provider configured).\n');
  const scripted = chosen ? undefined : new ScriptedModel(decide, { expectedCalls: 4 });
  const model = chosen?.model ?? (scripted as ScriptedModel);
  const chain = createChain({
    model,
    tools: gitTools(dir),
    systemPrompt:
      'You commit changes in a git repository: check the status, read the diff, then commit.',
    maxIterations: 6,
  });
  const states: string[] = ['idle'];
  for await (const event of chain.stream('Commit my change with a good message.')) {
    if (event.type === 'state') states.push(event.state);
    if (event.type === 'tool-call')
      console.log(`→ ${event.toolCall.name}(${JSON.stringify(event.toolCall.arguments)})`);
    if (event.type === 'tool-result') {
      const text = event.result.success
        ? String(event.result.output).trim()
        : `failed: ${event.result.error}`;
      console.log(`  ${text.split('\n').slice(0, 8).join('\n  ')}`);
    }
    if (event.type === 'final' && event.output.status === 'succeeded') {
      const { usage, iterations, text } = event.output;
      console.log(`\nanswer: ${text}`);
      console.log(`states: ${states.join(' → ')}`);
      console.log(
        `model calls: ${iterations}, tokens: ${usage.inputTokens} in + ${usage.outputTokens} out`,
      );
    }
  }
  scripted?.assertComplete();
  const { stdout } = await exec('git', ['log', '-1', '--stat', '--format=%s'], { cwd: dir });
  console.log(`\ngit log -1:\n${stdout.trimEnd()}`);
} catch (error) {
  // One line, e.g. `could not reach http://127.0.0.1:8080/v1 (connection refused)`:
  // STATECRAFT_DEBUG=1 adds the stack and the provider SDK's own error under it.
  console.error(`The run failed: ${error instanceof Error ? error.message : String(error)}`);
  if (process.env.STATECRAFT_DEBUG) {
    for (let e: unknown = error; e instanceof Error; e = e.cause) console.error(e.stack);
  }
  process.exitCode = 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
