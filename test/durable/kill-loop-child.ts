// Run by kill-loop.test.ts in a child process, which may kill it with SIGKILL: runs the
// durable tool loop of kill-loop-workload.ts with a fileStore, starting it (`invoke`) or
// resuming it (`resume`). Every plan, tool execution and response appends a line to the
// side-effect log and prints its progress on stdout (see kill-child-kit.ts):
//   plan-start N / plan-done N         the planner, for round index N
//   tool-start ID / tool-done ID       one execution of tool call ID (`round<n>_<index>`)
//   round-done N                       round N's answer is on disk; the next plan waits
//   respond-start / respond-done       the final response
//   output {...}                       the run's result (LoopOutput), then `run-done`
// With `linger`, each of these takes a few tens of ms (kill-loop-workload.ts), so that a kill
// sent on a progress line lands inside the plan, tool call, pause or response it announced.
// Usage: node --conditions=statecraft-source --import tsx kill-loop-child.ts '<ChildConfig>'
import { createToolLoop, fileStore, type PlannerContext } from 'statecraft';
import { answerType, childKit, pacedStore, toolCallFlags } from './kill-child-kit.js';
import {
  BETWEEN_ROUNDS_MS,
  LOOP_INPUT,
  LOOP_ROUNDS,
  LOOP_RUN_ID,
  type LoopEffectLine,
  type LoopOutput,
  PLAN_MS,
  RESPOND_MS,
  TOOL_MS,
  TOOL_NAMES,
} from './kill-loop-workload.js';

const { config, progress, effect, linger, tool, finish } =
  childKit<LoopEffectLine>('kill-loop-child.ts');

/** Plans by round, as a model would from the same context: a re-issued plan is the same plan. */
async function planner(context: PlannerContext) {
  const round = context.roundIndex;
  effect({ kind: 'plan', phase: 'start', round });
  progress(`plan-start ${round}`);
  await linger(PLAN_MS);
  const commands = LOOP_ROUNDS[round];
  effect({ kind: 'plan', phase: 'done', round });
  progress(`plan-done ${round}`);
  if (commands === undefined) return { nextAction: 'response', executionCommands: [] };
  return {
    nextAction: 'execute',
    executionCommands: commands.map(({ purpose, toolName, value }) => ({
      purpose,
      toolName,
      toolKwargs: { value },
    })),
  };
}

async function respond({ actionResults }: { readonly actionResults: Record<string, unknown> }) {
  effect({ kind: 'respond', phase: 'start' });
  progress('respond-start');
  await linger(RESPOND_MS);
  effect({ kind: 'respond', phase: 'done' });
  progress('respond-done');
  const results = Object.entries(actionResults).map(([key, value]) => `${key}: ${value}`);
  return `done (${results.join('; ')})`;
}

const tools = TOOL_NAMES.map((name) => tool(name, (callId) => TOOL_MS[callId] ?? 0));

/**
 * With `linger`, the store pauses after a round's answer is on disk and before anything after
 * it is written: the next plan's request entry waits, so the planner is not called yet
 * ("between rounds"). A round's number is in its calls' ids.
 */
const roundOfSeq = new Map<unknown, string>();
const store = pacedStore(fileStore(config.dir), (entry) => {
  if (entry.type === 'call')
    roundOfSeq.set(entry.seq, /^round(\d+)_/.exec(String(entry.callId))?.[1] ?? '?');
  const round = answerType(entry) === 'execute.done' ? roundOfSeq.get(entry.seq) : undefined;
  if (round === undefined) return undefined;
  progress(`round-done ${round}`);
  return linger(BETWEEN_ROUNDS_MS);
});

const loop = createToolLoop({ planner, tools, respond });
const result =
  config.mode === 'invoke'
    ? await loop.invoke(LOOP_INPUT, { runId: LOOP_RUN_ID, store })
    : await loop.resume(LOOP_RUN_ID, { store });
const output: LoopOutput = {
  answer: result.answer,
  toolLogs: result.toolLogs,
  plans: result.plans,
  toolCalls: toolCallFlags(result.details()).sort((a, b) => a.id.localeCompare(b.id)),
};
await finish(output);
