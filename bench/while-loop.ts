import {
  assistantMessage,
  type ContextMutation,
  compileTurn,
  type LanguageModel,
  LocalToolRegistry,
  mutate,
  responseText,
  responseToolCalls,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { fmt, medianMicros, type Row } from './measure.js';
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

export async function measureLoop(
  name: string,
  loop: (model: LanguageModel) => Promise<unknown>,
): Promise<{ perStep: number; rows: Row[] }> {
  const model = new WorkloadModel();
  const perStep = (await medianMicros(() => loop(model), 400)) / STEPS;
  const kb = await heapPerInFlightRun(loop, 1000);
  return {
    perStep,
    rows: [
      {
        measure: `${name}: µs per model step`,
        value: fmt(perStep),
        note: 'median of 400 runs, 11 steps each',
      },
      {
        measure: `${name}: heap KB per in-flight run`,
        value: fmt(kb, 1),
        note: '1,000 concurrent runs',
      },
    ],
  };
}
