import {
  assistantMessage,
  type ContextMutation,
  compileTurn,
  defineTool,
  LocalToolRegistry,
  type ModelRequest,
  mutate,
  responseText,
  responseToolCalls,
  type Transcript,
  Transcript as TranscriptClass,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { z } from 'zod';
import { fmt, medianMicros, type Row, settledHeap } from './measure.js';

// The floor every machine is compared with: a hand-written `while` tool loop over the
// scripted model. Workload per run: 10 tool calls, one per model step, then an answer
// (11 model steps). The model and the tool answer at once, so what is measured is the loop.

const TOOL_CALLS = 10;
const STEPS = TOOL_CALLS + 1;

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: z.object({ n: z.number() }),
  execute: ({ n }) => ({ n }),
});
const tools = new LocalToolRegistry([echo]);
const specs = tools.specs();

function turnFor(step: number): ScriptedTurn {
  return step < TOOL_CALLS
    ? {
        toolCalls: [{ id: `c${step}`, name: 'echo', arguments: { n: step } }],
        usage: { inputTokens: 10, outputTokens: 5 },
      }
    : { text: 'done', usage: { inputTokens: 10, outputTokens: 5 } };
}

type Gate = (request: ModelRequest, step: number) => Promise<void> | undefined;

function scriptedModel(gate?: Gate): ScriptedModel {
  return new ScriptedModel(
    (request, step) => {
      const wait = gate?.(request, step);
      return wait ? wait.then(() => turnFor(step)) : turnFor(step);
    },
    { expectedCalls: STEPS },
  );
}

/** The raw loop: append to the transcript, call the model, run the tools, repeat. */
async function rawLoop(model: ScriptedModel): Promise<string> {
  let transcript: Transcript = TranscriptClass.from([userMessage('Echo ten numbers.')]);
  while (true) {
    const response = await model.generate({ messages: transcript, tools: specs });
    const calls = responseToolCalls(response);
    transcript = transcript.append(assistantMessage(responseText(response), calls));
    if (calls.length === 0) return responseText(response);
    for (const call of calls)
      transcript = transcript.append(toolResultMessage(await tools.run(call)));
  }
}

/** The same loop with every request compiled by compileTurn, as every machine will do. */
async function compiledLoop(model: ScriptedModel): Promise<string> {
  let turn = compileTurn({
    transcript: [userMessage('Echo ten numbers.')],
    contract: { tools: tools.list() },
  });
  while (true) {
    const response = await model.generate({ messages: turn.messages, tools: specs });
    const calls = responseToolCalls(response);
    const mutations: ContextMutation[] = [mutate.assistantMessage(responseText(response), calls)];
    if (calls.length === 0) return responseText(response);
    for (const call of calls) mutations.push(mutate.toolResult(await tools.run(call)));
    turn = compileTurn({
      transcript: turn.transcript,
      mutations,
      contract: { tools: tools.list() },
    });
  }
}

/** Heap per run while `concurrent` runs are all suspended mid-run, in KB. */
async function heapPerInFlightRun(
  loop: (model: ScriptedModel) => Promise<string>,
  concurrent: number,
): Promise<number> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let parked = 0;
  let allParked!: () => void;
  const everyoneParked = new Promise<void>((resolve) => {
    allParked = resolve;
  });
  const before = settledHeap();
  const runs = Array.from({ length: concurrent }, () =>
    loop(
      scriptedModel((_request, step) => {
        if (step !== Math.floor(STEPS / 2)) return undefined;
        if (++parked === concurrent) allParked();
        return gate;
      }),
    ),
  );
  await everyoneParked;
  const during = settledHeap();
  release();
  await Promise.all(runs);
  return (during - before) / concurrent / 1024;
}

export async function whileLoopRows(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, loop] of [
    ['raw while loop', rawLoop],
    ['while loop + compileTurn', compiledLoop],
  ] as const) {
    const perStep = (await medianMicros(() => loop(scriptedModel()), 400)) / STEPS;
    rows.push({
      measure: `${name}: µs per model step`,
      value: fmt(perStep),
      note: 'median of 400 runs, 11 steps each',
    });
    const kb = await heapPerInFlightRun(loop, 1000);
    rows.push({
      measure: `${name}: heap KB per in-flight run`,
      value: fmt(kb, 1),
      note: '1,000 concurrent runs',
    });
  }
  return rows;
}
