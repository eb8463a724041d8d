import { createToolLoop, defineTool, type LanguageModel, type PlannerContext } from 'statecraft';
import {
  LANGUAGE_MODEL_VERSION,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from 'statecraft/model';
import { z } from 'zod';
import { fmt, median, medianMicros, type Row } from './measure.js';
import { echo } from './workload.js';

// The tool loop (SPEC T): wall time of one round of slow concurrent tools, and what a round
// costs around zero-latency planners and tools.

const ROUNDS = 10;
const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/** Rounds 0..ROUNDS-1 each echo one number; then the planner answers. */
function planFor(roundIndex: number): object {
  return roundIndex < ROUNDS
    ? {
        nextAction: 'execute',
        executionCommands: [
          { purpose: `Echo ${roundIndex}`, toolName: 'echo', toolKwargs: { n: roundIndex } },
        ],
      }
    : { nextAction: 'response', executionCommands: [] };
}

/**
 * A zero-latency model behind the default planner: it reads the round from the request's
 * context JSON and streams its plan with `nextAction` first, as the planner asks.
 */
class PlannerModel implements LanguageModel {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider = 'bench';
  readonly modelId = 'planner';

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const user = request.messages.toArray().find((m) => m.role === 'user');
    const context = JSON.parse(user?.role === 'user' ? user.content : '{}') as PlannerContext;
    return {
      content: [{ type: 'text', text: JSON.stringify(planFor(context.roundIndex)) }],
      usage: USAGE,
      finishReason: { unified: 'stop', raw: 'stop' },
    };
  }

  async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
    const response = await this.generate(request);
    const text = response.content[0]?.type === 'text' ? response.content[0].text : '';
    // Two deltas, the first ending inside the body, as a provider would send them.
    yield { type: 'text-delta', delta: text.slice(0, 40) };
    yield { type: 'text-delta', delta: text.slice(40) };
    yield { type: 'usage', usage: USAGE };
    yield { type: 'finish', finishReason: response.finishReason };
  }
}

/** µs per round of the tool loop, with a planner function and with the default model planner. */
export async function toolLoopRoundRows(chainPerStep: number): Promise<Row[]> {
  const loops = {
    'tool loop per round, planner function': createToolLoop({
      planner: ({ roundIndex }) => planFor(roundIndex),
      tools: [echo],
      maxRounds: ROUNDS,
    }),
    'tool loop per round, default model planner (streamed)': createToolLoop({
      model: new PlannerModel(),
      tools: [echo],
      maxRounds: ROUNDS,
      respond: false,
    }),
  };
  const rows: Row[] = [];
  for (const [measure, loop] of Object.entries(loops)) {
    const run = async () => {
      const result = await loop.invoke('Echo ten numbers.');
      if (result.rounds !== ROUNDS) throw new Error('the bench loop did not finish its rounds');
    };
    const perRound = (await medianMicros(run, 300)) / ROUNDS;
    rows.push({
      measure,
      value: `${fmt(perRound)} µs`,
      note: `${ROUNDS} rounds of 1 command + 1 answering plan; ${fmt(perRound / chainPerStep, 1)}× the chain's step`,
    });
  }
  return rows;
}

/** One round of 8 commands whose tools each wait 50 ms: wall time of the whole run, in ms. */
export async function toolLoopConcurrencyRows(): Promise<Row[]> {
  const slow = defineTool({
    name: 'wait',
    description: 'Waits 50 ms.',
    input: z.object({ i: z.number() }),
    execute: ({ i }) => new Promise((resolve) => setTimeout(() => resolve(i), 50)),
  });
  const commands = Array.from({ length: 8 }, (_, i) => ({
    purpose: `Wait ${i}`,
    toolName: 'wait',
    toolKwargs: { i },
  }));
  const rows: Row[] = [];
  for (const concurrency of [undefined, 4, 1]) {
    const loop = createToolLoop({
      planner: ({ roundIndex }) =>
        roundIndex === 0
          ? { nextAction: 'execute', executionCommands: commands }
          : { nextAction: 'response' },
      tools: [slow],
      ...(concurrency && { concurrency }),
    });
    const times: number[] = [];
    for (let run = 0; run < 7; run++) {
      const start = performance.now();
      const result = await loop.invoke('Wait eight times.');
      times.push(performance.now() - start);
      if (result.toolLogs.length !== 8) throw new Error('the bench round did not run 8 tools');
    }
    const target = { undefined: '≤ 55 ms', 4: '≤ 105 ms', 1: '≈ 400 ms' }[String(concurrency)];
    rows.push({
      measure: `tool loop: 8 tools × 50 ms in one round, concurrency ${concurrency ?? 'unlimited'}`,
      value: `${fmt(median(times), 1)} ms`,
      note: `median of 7 runs, whole run (target ${target})`,
    });
  }
  return rows;
}
