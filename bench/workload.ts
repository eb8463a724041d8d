import { defineTool, type LanguageModel } from 'statecraft';
import {
  LANGUAGE_MODEL_VERSION,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from 'statecraft/model';
import { z } from 'zod';
import { settledHeap } from './measure.js';

// The workload every loop row runs: per run, 10 model steps that each call one tool, then an
// answer (11 model steps). The model and the tool answer at once, so what is measured is the
// loop around them.

export const TOOL_CALLS = 10;
export const STEPS = TOOL_CALLS + 1;
export const ANSWER = '{"done":true}';

export const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: z.object({ n: z.number() }),
  execute: ({ n }) => ({ n }),
  duplicateCallWarn: true,
});

function responseFor(step: number, toolCalls: number): ModelResponse {
  const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
  return step < toolCalls
    ? {
        content: [
          { type: 'tool-call', toolCall: { id: `c${step}`, name: 'echo', arguments: { n: step } } },
        ],
        usage,
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      }
    : {
        content: [{ type: 'text', text: ANSWER }],
        usage,
        finishReason: { unified: 'stop', raw: 'stop' },
      };
}

type Gate = (step: number) => Promise<void> | undefined;

/**
 * The bench's model: it answers at once, from the request alone (the step is the number of
 * tool results so far), and records nothing, so one instance serves every run and what is
 * measured is the loop, not a test double's bookkeeping.
 */
export class WorkloadModel implements LanguageModel {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider = 'bench';
  readonly modelId = 'workload';
  readonly #gate: Gate | undefined;
  readonly #toolCalls: number;

  /** `toolCalls` steps that each call one tool, then the answer (the loop rows: TOOL_CALLS). */
  constructor(gate?: Gate, toolCalls = TOOL_CALLS) {
    this.#gate = gate;
    this.#toolCalls = toolCalls;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    let step = 0;
    for (const message of request.messages) if (message.role === 'tool') step++;
    const wait = this.#gate?.(step);
    if (wait) await wait;
    return responseFor(step, this.#toolCalls);
  }

  async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
    const response = await this.generate(request);
    for (const part of response.content) {
      yield part.type === 'text' ? { type: 'text-delta', delta: part.text } : part;
    }
    yield { type: 'usage', usage: response.usage };
    yield { type: 'finish', finishReason: response.finishReason };
  }
}

/** Heap per run, in KB, while `concurrent` runs are all parked halfway through. */
export async function heapPerInFlightRun(
  run: (model: LanguageModel) => Promise<unknown>,
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
  // One model for every run (it reads the step from each request), and one warm-up run, so
  // that what is measured is the runs, not a chain built per model.
  const model = new WorkloadModel((step) => {
    if (!counting || step !== Math.floor(STEPS / 2)) return undefined;
    if (++parked === concurrent) allParked();
    return gate;
  });
  let counting = false;
  await run(model);
  counting = true;
  const before = settledHeap();
  const runs = Array.from({ length: concurrent }, () => run(model));
  await everyoneParked;
  const during = settledHeap();
  release();
  await Promise.all(runs);
  return (during - before) / concurrent / 1024;
}
