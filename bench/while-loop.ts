import {
  assistantMessage,
  type LanguageModel,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { type ContextMutation, compileTurn, mutate } from 'statecraft/compile';
import { responseText, responseToolCalls } from 'statecraft/model';
import { LocalToolRegistry } from 'statecraft/tools';
import { fmt, median, type Row } from './measure.js';
import { echo, heapPerInFlightRun, STEPS, WorkloadModel } from './workload.js';

// The floor every machine is compared with: a hand-written `while` tool loop over the
// scripted model and the same tool.

const tools = new LocalToolRegistry([echo]);
const specs = tools.specs();

/** The raw loop: append to the transcript, call the model, run the tools, repeat. */
export async function rawLoop(model: LanguageModel): Promise<string> {
  let transcript = Transcript.from([userMessage('Echo ten numbers.')]);
  while (true) {
    const response = await model.generate({ messages: transcript, tools: specs });
    const calls = responseToolCalls(response);
    transcript = transcript.append(assistantMessage(responseText(response), calls));
    if (calls.length === 0) return responseText(response);
    for (const call of calls)
      transcript = transcript.append(toolResultMessage(await tools.run(call)));
  }
}

/** The same loop with every request compiled by compileTurn, as every machine does. */
async function compiledLoop(model: LanguageModel): Promise<string> {
  const contract = { tools: tools.list() };
  let turn = compileTurn({ transcript: [userMessage('Echo ten numbers.')], contract });
  while (true) {
    const response = await model.generate({ messages: turn.messages, tools: specs });
    const calls = responseToolCalls(response);
    const mutations: ContextMutation[] = [mutate.assistantMessage(responseText(response), calls)];
    if (calls.length === 0) return responseText(response);
    for (const call of calls) mutations.push(mutate.toolResult(await tools.run(call)));
    turn = compileTurn({ transcript: turn.transcript, mutations, contract });
  }
}

export const LOOPS = [
  ['raw while loop', rawLoop],
  ['while loop + compileTurn', compiledLoop],
] as const;

type Loop = (model: LanguageModel) => Promise<unknown>;

/**
 * µs per model step of each loop, interleaved: five rounds of 100 timed runs per loop, taking
 * turns, so a slow spell of a shared machine hits every loop alike; the median of all of a
 * loop's runs. Then heap per in-flight run, with 1,000 runs parked halfway.
 */
export async function measureLoops(
  loops: readonly (readonly [string, Loop])[],
): Promise<{ perStep: Map<string, number>; rows: Row[] }> {
  const model = new WorkloadModel();
  const samples = new Map<string, number[]>(loops.map(([name]) => [name, []]));
  for (const [, loop] of loops) for (let i = 0; i < 100; i++) await loop(model); // warm-up
  for (let round = 0; round < 5; round++) {
    for (const [name, loop] of loops) {
      const times = samples.get(name) as number[];
      for (let i = 0; i < 100; i++) {
        const start = process.hrtime.bigint();
        await loop(model);
        times.push(Number(process.hrtime.bigint() - start) / 1000 / STEPS);
      }
    }
  }
  const perStep = new Map<string, number>();
  const rows: Row[] = [];
  for (const [name, loop] of loops) {
    const micros = median(samples.get(name) as number[]);
    perStep.set(name, micros);
    rows.push(
      {
        measure: `${name}: µs per model step`,
        value: fmt(micros),
        note: 'median of 500 runs, interleaved',
      },
      {
        measure: `${name}: heap KB per in-flight run`,
        value: fmt(await heapPerInFlightRun(loop, 1000), 1),
        note: '1,000 concurrent runs',
      },
    );
  }
  return { perStep, rows };
}
