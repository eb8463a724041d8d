// A tool loop researching this repository: which files define statecraft's machines, and
// how long are they? A planner plans rounds of tool calls over the real files — find, then
// count lines (concurrently), then add — and a final response answers from the results.
// It runs on the embedded scripted model, whose plans read the real records of each round.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  createToolLoop,
  defineTool,
  type ModelRequest,
  type PlannerContext,
  type ToolExecutionRecord,
} from 'statecraft';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { z } from 'zod';

const root = join(import.meta.dirname, '..');

const tools = [
  defineTool({
    name: 'find_files',
    description: 'Lists the files under a folder of the repository whose text contains a string.',
    input: z.object({ dir: z.string(), contains: z.string() }),
    execute: async ({ dir, contains }) => {
      const entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
      const found: string[] = [];
      for (const entry of entries.filter((e) => e.isFile())) {
        const path = join(entry.parentPath, entry.name);
        if ((await readFile(path, 'utf8')).includes(contains)) found.push(relative(root, path));
      }
      return found.sort();
    },
  }),
  defineTool({
    name: 'count_lines',
    description: 'Counts the lines of a file of the repository.',
    input: z.object({ path: z.string() }),
    execute: async ({ path }) => (await readFile(join(root, path), 'utf8')).split('\n').length - 1,
  }),
  defineTool({
    name: 'add',
    description: 'Adds numbers.',
    input: z.object({ numbers: z.array(z.number()) }),
    execute: ({ numbers }) => numbers.reduce((sum, n) => sum + n, 0),
  }),
];

/** The scripted planner: each round's plan is drawn from the records of the round before. */
function plan(context: PlannerContext): ScriptedTurn {
  const last: readonly ToolExecutionRecord[] = context.lastRoundResult;
  const command = (purpose: string, toolName: string, toolKwargs: object) => ({
    purpose,
    toolName,
    toolKwargs,
    todoSuggestion: '',
  });
  const execute = (...commands: object[]) => ({
    text: JSON.stringify({ nextAction: 'execute', executionCommands: commands }),
  });
  if (context.roundIndex === 0) {
    return execute(
      command('Find the machine files', 'find_files', {
        dir: 'machines',
        contains: 'createMachine(',
      }),
    );
  }
  if (last[0]?.toolName === 'find_files') {
    const files = last[0].result as string[];
    return execute(...files.map((path) => command(`Lines of ${path}`, 'count_lines', { path })));
  }
  if (last[0]?.toolName === 'count_lines') {
    return execute(command('Total lines', 'add', { numbers: last.map((r) => r.result) }));
  }
  // Streamed: the loop decides on the first field and never reads the rest (instant plans).
  return { chunks: ['{"nextAction": "response", ', '"executionCommands": []}'] };
}

/** The first `{ … \n}` block of a note, found by indexOf: linear, unlike a lazy regex (which backtracks on a long answer). */
function firstBlock(text: string): string {
  const start = text.indexOf('{');
  const end = start < 0 ? -1 : text.indexOf('\n}', start + 1);
  return end < 0 ? '{}' : text.slice(start, end + 2);
}

/** The scripted final response: it reads the action results the loop injected. */
function answer(request: ModelRequest): ScriptedTurn {
  const note = request.messages.toArray().find((m) => m.role === 'system');
  const results = JSON.parse(firstBlock(note?.content ?? ''));
  const files = Object.keys(results).filter((key) => key.startsWith('Lines of '));
  const list = files.map((key) => `${key.slice(9)} (${results[key]} lines) [${key}]`);
  return {
    text: `The machines are defined in ${files.length} files: ${list.join(', ')}, ${results['Total lines']} lines in all [Total lines].`,
  };
}

/** The default planner sends the round's context as JSON in its user message. */
function plannerContext(request: ModelRequest): PlannerContext {
  const message = request.messages.toArray().find((m) => m.role === 'user');
  return JSON.parse(message?.role === 'user' ? message.content : '{}');
}

const model = new ScriptedModel((request) =>
  request.responseFormat?.type === 'json_schema' ? plan(plannerContext(request)) : answer(request),
);

const loop = createToolLoop({ model, tools, concurrency: 2, maxRounds: 4 });
console.log('Running on the embedded scripted model.\n');
const states: string[] = [];
for await (const event of loop.stream('Which files define the machines, and how long are they?')) {
  if (event.type === 'round-started') console.log(`round ${event.roundIndex + 1}`);
  if (event.type === 'commands-planned') {
    const { nextAction, executionCommands } = event.plan;
    const early = event.shortCircuited ? ' (decided on its first field)' : '';
    console.log(`  plan: ${nextAction}${early}`);
    for (const c of executionCommands)
      console.log(`  → ${c.toolName}(${JSON.stringify(c.toolKwargs)})`);
  }
  if (event.type === 'record') {
    const { index, record } = event;
    console.log(
      `  ${record.success ? '✓' : '✗'} #${index + 1} ${JSON.stringify(record.result ?? record.error)}`,
    );
  }
  if (event.type === 'state') states.push(event.state.replace('running.', ''));
  if (event.type === 'final' && event.output.status === 'done') {
    console.log(`\nanswer: ${event.output.response?.text}`);
    console.log(`stopped: ${event.output.stopReason} after ${event.output.rounds} rounds`);
  }
}
console.log(`states: ${states.join(' → ')}`);
