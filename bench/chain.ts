import {
  type Chain,
  type ChainRunOptions,
  createChain,
  defineTool,
  type LanguageModel,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';
import { fmt, median, type Row } from './measure.js';
import { ANSWER, echo } from './workload.js';

// The chain on the loop workload with every policy option on: warnings, duplicate-call
// checks, tool notes, structured output and validateResult, intermediate results.

export function benchChain(model: LanguageModel, maxIterations = 12): Chain<{ done: boolean }> {
  return createChain({
    model,
    tools: [echo],
    systemPrompt: 'Echo the numbers, then answer.',
    maxIterations,
    maxTokens: 100_000,
    warningPrompt: { iterations: 'Two generations left.', tokens: 'Tokens are running out.' },
    warningThreshold: { iterations: -2, tokens: -1_000 },
    toolResponseInstructions: 'Tool results follow.',
    outputSchema: z.object({ done: z.boolean() }),
    validateResult: (result) => (result.done ? { ok: true } : { ok: false, message: 'Not done.' }),
    resultCacheKey: 'echo',
  });
}

// One chain per model, built once: runs share it as an application's requests would.
const chains = new WeakMap<LanguageModel, Chain<{ done: boolean }>>();

export async function chainRun(model: LanguageModel, options?: ChainRunOptions): Promise<unknown> {
  let chain = chains.get(model);
  if (!chain) {
    chain = benchChain(model);
    chains.set(model, chain);
  }
  const result = await chain.invoke('Echo ten numbers.', options);
  if (JSON.stringify(result.result) !== ANSWER)
    throw new Error('the bench chain did not finish its workload');
  return result;
}

/** One step of 8 tools that each wait 50 ms: wall time of the whole run, in ms. */
export async function concurrentToolsRows(): Promise<Row[]> {
  const slow = defineTool({
    name: 'wait',
    description: 'Waits 50 ms.',
    input: z.object({ i: z.number() }),
    execute: ({ i }) => new Promise((resolve) => setTimeout(() => resolve(i), 50)),
  });
  const rows: Row[] = [];
  for (const toolConcurrency of [undefined, 4, 1]) {
    const times: number[] = [];
    for (let run = 0; run < 7; run++) {
      const model = new ScriptedModel([
        { toolCalls: Array.from({ length: 8 }, (_, i) => ({ name: 'wait', arguments: { i } })) },
        { text: 'done' },
      ]);
      const chain = createChain({
        model,
        tools: [slow],
        ...(toolConcurrency && { toolConcurrency }),
      });
      const start = performance.now();
      await chain.invoke('Wait eight times.');
      times.push(performance.now() - start);
    }
    rows.push({
      measure: `chain: 8 tools × 50 ms in one step, toolConcurrency ${toolConcurrency ?? 'unlimited'}`,
      value: `${fmt(median(times), 1)} ms`,
      note: 'median of 7 runs, whole run',
    });
  }
  return rows;
}
