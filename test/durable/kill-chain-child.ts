// Run by kill-chain.test.ts in a child process, which may kill it with SIGKILL: runs the
// durable chain of kill-chain-workload.ts with a fileStore, starting it (`invoke`) or resuming
// it (`resume`). Every model call and tool execution appends a line to the side-effect log and
// prints its progress on stdout (see kill-child-kit.ts):
//   model-start N / model-done N   model call N (N = assistant messages so far)
//   tool-start ID / tool-done ID   one execution of tool call ID
//   step-done N                    tool step N's answer is on disk; the next model call waits
//   output {...}                   the run's result (ChildOutput), then `run-done`
// With `linger`, each of these takes a few tens of ms (kill-chain-workload.ts), so that a kill
// sent on a progress line lands inside the model call, tool call or pause it announced.
// Usage: node --conditions=statecraft-source --import tsx kill-chain-child.ts '<ChildConfig>'
import { createChain, fileStore, type LanguageModel } from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { turnModel } from './helpers.js';
import {
  BETWEEN_STEPS_MS,
  type ChildOutput,
  type EffectLine,
  KILL_CALLS,
  KILL_INPUT,
  KILL_RUN_ID,
  KILL_TURNS,
  MODEL_MS,
  TOOL_MS,
  TOOL_NAMES,
} from './kill-chain-workload.js';
import { answerType, childKit, pacedStore, toolCallFlags } from './kill-child-kit.js';

const { config, progress, effect, linger, tool, finish } =
  childKit<EffectLine>('kill-chain-child.ts');

const stepOf = (request: ModelRequest) =>
  request.messages.toArray().filter((message) => message.role === 'assistant').length;

const turns = turnModel(KILL_TURNS);
const model: LanguageModel = {
  specificationVersion: turns.specificationVersion,
  provider: turns.provider,
  modelId: turns.modelId,
  async generate(request) {
    const step = stepOf(request);
    effect({ kind: 'model', phase: 'start', step });
    progress(`model-start ${step}`);
    await linger(MODEL_MS);
    const response = await turns.generate(request);
    effect({ kind: 'model', phase: 'done', step });
    progress(`model-done ${step}`);
    return response;
  },
  stream: (request) => turns.stream(request),
};

const tools = TOOL_NAMES.map((name) => tool(name, (callId) => TOOL_MS[callId] ?? 0));

/**
 * With `linger`, the store pauses after a tool step's answer is on disk and before anything
 * after it is written: the next model call's request entry waits, so the model is not called
 * yet ("between steps").
 */
const stepOfSeq = new Map<unknown, number>(); // the step of each tool step, by its seq
const store = pacedStore(fileStore(config.dir), (entry) => {
  if (entry.type === 'call') {
    const step = KILL_CALLS.find((call) => call.id === entry.callId)?.step;
    if (step !== undefined) stepOfSeq.set(entry.seq, step);
  }
  const step = answerType(entry) === 'executeTools.done' ? stepOfSeq.get(entry.seq) : undefined;
  if (step === undefined) return undefined;
  progress(`step-done ${step}`);
  return linger(BETWEEN_STEPS_MS);
});

const chain = createChain({ model, tools });
const result =
  config.mode === 'invoke'
    ? await chain.invoke(KILL_INPUT, { runId: KILL_RUN_ID, store })
    : await chain.resume(KILL_RUN_ID, { store });
const details = result.details();
const output: ChildOutput = {
  text: result.text,
  transcript: result.transcript,
  toolCalls: toolCallFlags(details),
  modelCalls: details.modelCalls.map((call) => ({
    replayed: call.replayed === true,
    possiblyRepeated: call.possiblyRepeated === true,
  })),
};
await finish(output);
