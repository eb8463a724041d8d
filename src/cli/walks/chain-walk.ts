import type { EventObject } from 'xstate';
import {
  type ChainConfig,
  type ChainEvent,
  chainMachine,
  type ExecuteToolsOutput,
} from '../../../machines/chain.js';
import { ConfigError } from '../../errors.js';
import type { ToolResult } from '../../messages.js';
import type { ModelResponse } from '../../model/language-model.js';
import type { PathsSpec } from '../machine-of.js';
import { APPROVAL_EVENTS, approvalEvents, chainPhase } from './approval-events.js';
import {
  ANSWER_TOKENS,
  CHEAP_CALLS_TOKENS,
  HUGE_TOKENS,
  PATH_CONFIG,
  PATH_CONFIGS,
  pathInput,
  TOOL_CALL_TOKENS,
  usageOf,
  walksApprovals,
} from './chain-configs.js';

// How `statecraft paths` walks the chain machine when it is given the bare machine (or a
// Chain): small limits, the answers each effect may give, and one walk per way a run can end
// at a limit (fail, 'force', 'generate', a returnDirect tool, the budgets of SPEC H3), so
// together they take every transition. The project's own suite (test/machines/chain.paths.test.ts) walks the same
// ground with replays on real actors.

type ChainSnapshot = ReturnType<typeof chainMachine.getInitialSnapshot>;

const STOP = { unified: 'stop', raw: 'stop' } as const;
const TOOL_CALLS = { unified: 'tool-calls', raw: 'tool_calls' } as const;
const LOOKUP = { id: 'call_1', name: 'lookup', arguments: { q: 'France' } };

const response = (content: ModelResponse['content'], tokens: number): ModelResponse => ({
  content,
  usage: usageOf(tokens),
  finishReason: content.some((part) => part.type === 'tool-call') ? TOOL_CALLS : STOP,
});
const tools = (success: boolean): ExecuteToolsOutput => ({
  results: [
    success
      ? { toolCallId: 'call_1', name: 'lookup', output: 'Paris', success }
      : { toolCallId: 'call_1', name: 'lookup', output: null, success, error: 'not found' },
  ],
  streamBatches: [],
  openedStream: false,
});

/** One object per event, so each has one name in path names. */
const EVENTS = {
  toolCall: {
    type: 'callModel.done',
    output: response(
      [
        { type: 'text', text: 'Let me look that up.' },
        { type: 'tool-call', toolCall: LOOKUP },
      ],
      TOOL_CALL_TOKENS,
    ),
  },
  twoCalls: {
    type: 'callModel.done',
    output: response(
      [
        { type: 'tool-call', toolCall: LOOKUP },
        { type: 'tool-call', toolCall: { ...LOOKUP, id: 'call_2' } },
      ],
      TOOL_CALL_TOKENS,
    ),
  },
  // Past maxToolCalls 1, with room for the final call (SPEC H3).
  cheapCalls: {
    type: 'callModel.done',
    output: response(
      [
        { type: 'tool-call', toolCall: LOOKUP },
        { type: 'tool-call', toolCall: { ...LOOKUP, id: 'call_2' } },
      ],
      CHEAP_CALLS_TOKENS,
    ),
  },
  callsOnly: {
    type: 'callModel.done',
    output: response([{ type: 'tool-call', toolCall: LOOKUP }], TOOL_CALL_TOKENS),
  },
  answer: {
    type: 'callModel.done',
    output: response([{ type: 'text', text: 'Paris.' }], ANSWER_TOKENS),
  },
  huge: {
    type: 'callModel.done',
    output: response([{ type: 'text', text: 'Paris…' }], HUGE_TOKENS),
  },
  modelError: { type: 'callModel.error', error: new Error('model unavailable') },
  configError: {
    type: 'callModel.error',
    error: new ConfigError('remote', 'lists a local tool name'),
  },
  // call_1 finished, before its step ends: a step cut short keeps it.
  toolResult: { type: 'executeTools.result', result: tools(true).results[0] as ToolResult },
  toolsDone: { type: 'executeTools.done', output: tools(true) },
  toolsFailed: { type: 'executeTools.done', output: tools(false) },
  toolsError: { type: 'executeTools.error', error: new Error('tool host crashed') },
  valid: { type: 'validateResult.done', output: { ok: true, value: 'Paris' } },
  invalid: { type: 'validateResult.done', output: { ok: false, message: 'One word, please.' } },
  validationError: { type: 'validateResult.error', error: new Error('validator crashed') },
  abort: { type: 'ABORT', reason: 'user cancelled' },
  ...APPROVAL_EVENTS,
} as const satisfies Record<string, ChainEvent>;

const NAMES = new Map<EventObject, string>(Object.entries(EVENTS).map(([k, v]) => [v, k]));

/** The answers to the effect the active state requested, and ABORT while the model thinks or tools run. */
function chainEvents(snapshot: ChainSnapshot): ChainEvent[] {
  if (snapshot.status !== 'active') return [];
  const { context } = snapshot;
  const direct = context.config.returnDirectTools.length > 0;
  const approvalWalk = walksApprovals(context.config);
  // call_1 may finish before its step ends; in walks of approvals only while another call
  // waits, which keeps them small.
  const finishes =
    context.toolCalls.some((call) => call.id === LOOKUP.id) &&
    !context.stepResults.some((result) => result.toolCallId === LOOKUP.id);
  const waits = context.approvals.awaiting.some((a) => a.callId === LOOKUP.id);
  const answers: Record<string, readonly ChainEvent[]> = {
    thinking: [
      EVENTS.toolCall,
      ...(direct ? [EVENTS.twoCalls] : []),
      ...(snapshot.context.config.maxToolCalls === undefined ? [] : [EVENTS.cheapCalls]),
      EVENTS.answer,
      EVENTS.huge,
      EVENTS.modelError,
      EVENTS.configError,
      EVENTS.abort,
    ],
    doing: [
      ...(finishes && !approvalWalk ? [EVENTS.toolResult] : []),
      EVENTS.toolsDone,
      ...(direct && finishes ? [EVENTS.toolsFailed] : []),
      EVENTS.toolsError,
      EVENTS.abort,
    ],
    validating: [EVENTS.valid, EVENTS.invalid, EVENTS.validationError],
    concluding: [
      EVENTS.answer,
      EVENTS.callsOnly,
      EVENTS.huge,
      EVENTS.modelError,
      EVENTS.configError,
    ],
    // A call finishes while others wait; a host breaks while calls wait, as in `doing`.
    awaitingApproval: [
      ...(finishes && !waits ? [EVENTS.toolResult] : []),
      EVENTS.toolsError,
      EVENTS.abort,
    ],
  };
  const state = String(snapshot.value);
  const approvals = approvalWalk ? approvalEvents(chainPhase(state), context.approvals) : [];
  return [...approvals, ...(answers[state] ?? [])];
}

/** What decides the future: not the transcripts, which would make every path a vertex. */
function serializeChainState(snapshot: ChainSnapshot): string {
  const { context } = snapshot;
  return JSON.stringify({
    value: snapshot.value,
    iterations: context.iterations,
    warned: context.warned,
    tokens: context.usage.totalTokens,
    calls: context.toolCalls.length,
    steps: context.steps.map((step) => step.toolResults.map((r) => r.success)),
    stepResults: context.stepResults.map((r) => r.toolCallId),
    response: context.response?.content.length,
    limit: context.limitReached,
    failure: context.failure?.code,
    approvals: context.approvals,
  });
}

const CONFIGS: Record<string, ChainConfig> = {
  'maxIterations 2, maxTokens 120': PATH_CONFIGS.base,
  'with maxExecutionTime, earlyStopping force': PATH_CONFIGS.force,
  'with maxExecutionTime, earlyStopping generate': PATH_CONFIGS.generate,
  'maxIterations 0 (fails at the start)': { ...PATH_CONFIG, maxIterations: 0 },
  'maxIterations 0, earlyStopping force (no model call)': {
    ...PATH_CONFIG,
    maxIterations: 0,
    earlyStopping: 'force',
  },
  'maxExecutionTime 0 (fails at the start)': { ...PATH_CONFIG, maxExecutionTime: 0 },
  'maxExecutionTime 0, earlyStopping force (no model call)': {
    ...PATH_CONFIG,
    maxExecutionTime: 0,
    earlyStopping: 'force',
  },
  'with a returnDirect tool, maxTokens 61': PATH_CONFIGS.exactBudget,
  'maxToolCalls 1, maxTokens checked before each call': PATH_CONFIGS.toolBudget,
  'maxToolCalls 1, maxCost, earlyStopping generate': PATH_CONFIGS.costBudget,
  'with a tool that needs approval': PATH_CONFIGS.approval,
  'with a tool that needs approval, deadlines fail the run': PATH_CONFIGS.approvalFail,
};

/** The chain machine's walks (for `machine`, which may be a Chain's provided copy). */
export function chainWalks(machine: typeof chainMachine = chainMachine): PathsSpec[] {
  return Object.entries(CONFIGS).map(([label, config]) => ({
    machine,
    label,
    input: pathInput(config),
    events: chainEvents,
    actors: { effects: 'never' },
    serializeState: serializeChainState,
    describeEvent: (event) => NAMES.get(event) ?? event.type,
    limits: { maxDepth: 20, maxPaths: 2000 },
  }));
}
