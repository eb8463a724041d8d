import {
  type AnyTool,
  type ApproveCallback,
  type ChainOptions,
  createChain,
  createToolLoop,
  type InvalidToolCallPolicy,
  type Planner,
  type ToolCall,
  type ToolCallHooks,
  type ToolLoopOptions,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';
import {
  buildTools,
  type Execution,
  fuzzModel,
  isFaultyResponse,
  type ModelState,
  noteTurn,
  type OpenThings,
  scriptedTurn,
  sleep,
  toolName,
  untilAborted,
  VALID_JSON,
  VALIDATE_BOOM,
} from './fixtures.js';
import type {
  ApprovalsData,
  ChainScenario,
  Hooks,
  InvalidCalls,
  LoopScenario,
  PlanData,
  PlanStepData,
  Scenario,
  ToolControlData,
  TurnData,
  UsageKind,
} from './scenario.js';
import { FUZZ_PRICES } from './scenario.js';

// createChain / createToolLoop options from a scenario, through the public API only.

/** What validate 'rejectOnce' answers the first time: crash mode finds it in a journal. */
export const REJECT_ONCE = 'Not quite; try again.';

const FALLBACK_TEXT: TurnData = {
  answer: { kind: 'text', text: 'done' },
  latencyMs: 0,
  chunkDelayMs: 0,
  usage: 'default',
};
const FALLBACK_JSON: TurnData = {
  ...FALLBACK_TEXT,
  answer: { kind: 'json', valid: true, prose: false },
};

/**
 * Where the scripts of a process that resumes a crashed durable run start (crash mode).
 *
 * The fuzz model and planners answer by position: the n-th model call of a chain gets turn n,
 * the n-th plan of a tool loop gets plan n. A resumed process does not make the calls its
 * journal answered, so a script starting at 0 would hand the first call it does make (the call
 * in flight at the crash, issued again, or the next new one) an earlier answer than the
 * crashed process got: a different run, not a resumed one. A real model answers the same
 * request alike whichever process asks; the positional script gets there by skipping the
 * calls the crashed process made and the journal answers (count them: crash.ts). A call in
 * flight at the crash is not skipped, so the re-issued call gets the answer the crashed one
 * got. (Answering by the request instead, as test/durable's turnModel does, would change what
 * every fuzz scenario means; the offset keeps them as they are.) The other stateful fixture,
 * validate 'rejectOnce', starts as having rejected when the journal holds its rejection.
 */
export interface ScriptStart {
  /** Chain: the crashed process's model calls that the journal answers. */
  readonly modelCalls: number;
  /** Tool loop: the crashed process's plans (model or function planner) the journal answers. */
  readonly plans: number;
  /** Chain: validate 'rejectOnce' rejected already. */
  readonly rejected: boolean;
}

export const FROM_START: ScriptStart = { modelCalls: 0, plans: 0, rejected: false };

/** What crash mode adds to a build: a log of tool executions, and where the scripts start. */
export interface BuildExtras {
  readonly log?: Execution[];
  readonly from?: ScriptStart;
}

export function chainOptions(
  s: ChainScenario,
  open: OpenThings,
  state: ModelState,
  { log, from = FROM_START }: BuildExtras = {},
): ChainOptions<unknown> {
  const o = s.options;
  const fallback = o.structured === 'none' ? FALLBACK_TEXT : FALLBACK_JSON;
  const turnAt = (i: number) => s.turns[i] ?? fallback;
  const scripted = new ScriptedModel((request, index) => {
    const callIndex = index + from.modelCalls;
    const turn = turnAt(callIndex);
    noteTurn(turn, state);
    return scriptedTurn(turn, request, callIndex, s.tools.length);
  });
  let rejected = from.rejected;
  const validateResult =
    o.validate === 'none'
      ? undefined
      : async (): Promise<{ ok: true } | { ok: false; message: string }> => {
          switch (o.validate) {
            case 'rejectOnce':
              if (rejected) return { ok: true };
              rejected = true;
              return { ok: false, message: REJECT_ONCE };
            case 'rejectAlways':
              return { ok: false, message: 'Never good enough.' };
            case 'throws':
              throw new Error(VALIDATE_BOOM);
            default:
              await sleep(2);
              return { ok: true };
          }
        };
  const structured =
    o.structured === 'zod'
      ? { outputSchema: z.object({ answer: z.number() }) }
      : o.structured === 'jsonSchema'
        ? {
            outputSchema: {
              type: 'object',
              properties: { answer: { type: 'number' } },
              required: ['answer'],
            },
          }
        : o.structured === 'jsonObject'
          ? { responseFormat: { type: 'json_object' as const } }
          : {};
  return {
    model: fuzzModel(scripted, (i) => turnAt(i + from.modelCalls).usage),
    tools: withApprovals(buildTools(s.tools, open, log), o.approvals),
    ...approvalDeadline(o.approvals),
    ...(o.maxIterations !== undefined && { maxIterations: o.maxIterations }),
    ...(o.maxTokens !== undefined && { maxTokens: o.maxTokens }),
    ...(o.maxToolCalls !== undefined && { maxToolCalls: o.maxToolCalls }),
    ...(o.maxCost !== undefined && { maxCost: o.maxCost }),
    ...((o.maxCost !== undefined || o.priced) && { prices: FUZZ_PRICES }),
    ...(o.maxOutputTokens !== undefined && {
      modelSettings: { maxOutputTokens: o.maxOutputTokens },
    }),
    ...(o.maxExecutionTime !== undefined && { maxExecutionTime: o.maxExecutionTime }),
    ...(o.earlyStopping !== undefined && { earlyStopping: o.earlyStopping }),
    ...(o.toolTimeoutMs !== undefined && { toolTimeoutMs: o.toolTimeoutMs }),
    ...(o.toolConcurrency !== undefined && { toolConcurrency: o.toolConcurrency }),
    ...(o.streamBatchSize !== undefined && { streamBatchSize: o.streamBatchSize }),
    ...(validateResult && { validateResult }),
    ...toolControl(o),
    ...structured,
  } as ChainOptions<unknown>;
}

export function buildChain(
  s: ChainScenario,
  open: OpenThings,
  state: ModelState,
  extras?: BuildExtras,
) {
  return createChain(chainOptions(s, open, state, extras));
}

/** The plan object a planner answers with. */
export function planObject(plan: Extract<PlanData, { kind: 'plan' }>, tools: number) {
  const commands = plan.commands.map((c, i) => ({
    purpose: `purpose ${i % 2}`,
    toolName:
      c.target === 'blank'
        ? '  '
        : c.target === 'unknown'
          ? 'no_such_tool'
          : toolName(c.target, tools),
    toolKwargs: c.args === 'valid' ? { n: 1 } : c.args === 'invalid' ? { n: 'x' } : 'oops',
    todoSuggestion: '',
  }));
  return {
    ...(plan.action !== 'missing' && { nextAction: plan.action }),
    ...(plan.listKey === 'toolCommand'
      ? { toolCommand: commands[0] ?? {} }
      : { [plan.listKey]: commands }),
    ...(plan.useTool !== undefined && { useTool: plan.useTool }),
  };
}

/** A plan as a model or a text-answering planner writes it. */
function planText(step: PlanStepData, tools: number): string {
  const { plan } = step;
  switch (plan.kind) {
    case 'garbage':
      return plan.text;
    case 'notObject':
      return JSON.stringify(plan.value);
    case 'plan': {
      const json = JSON.stringify(planObject(plan, tools));
      return step.form === 'prose' ? `My plan: ${json} (end)` : json;
    }
    default:
      return '';
  }
}

const DONE_PLAN: PlanStepData = {
  plan: { kind: 'plan', action: 'response', listKey: 'executionCommands', commands: [] },
  form: 'object',
  latencyMs: 0,
  usage: 'default',
};

function failsModel(step: PlanStepData): boolean {
  return step.plan.kind === 'throw' || isFaultyResponse(step.usage);
}

export function loopOptions(
  s: LoopScenario,
  open: OpenThings,
  state: ModelState,
  { log, from = FROM_START }: BuildExtras = {},
): ToolLoopOptions {
  const tools = s.tools.length;
  let planIndex = from.plans;
  const nextPlan = () => s.plans[planIndex++] ?? DONE_PLAN;
  // How each model call reports usage, by call index (plans and the response share it).
  const usageOf = new Map<number, UsageKind>();
  const scripted = new ScriptedModel((request, callIndex) => {
    if (!request.responseFormat) {
      noteTurn(s.response, state);
      usageOf.set(callIndex, s.response.usage);
      return scriptedTurn(s.response, request, callIndex, tools);
    }
    const step = nextPlan();
    state.calls++;
    if (failsModel(step)) state.failed = true;
    usageOf.set(callIndex, step.usage);
    const usage: TurnData = { ...FALLBACK_TEXT, latencyMs: step.latencyMs, usage: step.usage };
    if (step.plan.kind === 'throw') {
      return scriptedTurn({ ...usage, answer: { kind: 'throw', typed: false } }, request, 0, 0);
    }
    if (step.plan.kind === 'hang') {
      return scriptedTurn({ ...usage, answer: { kind: 'hang' } }, request, 0, 0);
    }
    const text = planText(step, tools);
    const turn = scriptedTurn({ ...usage, answer: { kind: 'text', text } }, request, 0, 0);
    // A streamed plan arrives in pieces, so the instant short-circuit has something to cut.
    const third = Math.ceil(text.length / 3);
    return text.length > 3
      ? {
          ...turn,
          chunks: [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)],
        }
      : turn;
  });
  const planner: Planner = async (_context, { signal }) => {
    const step = nextPlan();
    state.calls++;
    await sleep(step.latencyMs);
    const { plan } = step;
    if (plan.kind === 'throw') {
      state.failed = true;
      throw new Error('fuzz: the planner failed');
    }
    if (plan.kind === 'hang') return untilAborted(signal);
    if (step.form === 'object') {
      if (plan.kind === 'plan') return planObject(plan, tools);
      if (plan.kind === 'notObject') return plan.value;
    }
    const text = planText(step, tools);
    if (step.form !== 'stream') return text;
    return (async function* () {
      for (let i = 0; i < text.length; i += 7) {
        await sleep(1);
        yield text.slice(i, i + 7);
      }
    })();
  };
  const usesModel = s.planner === 'model' || s.respond === 'model';
  const respond =
    s.respond === 'model'
      ? true
      : s.respond === 'none'
        ? false
        : async () => {
            state.calls++;
            await sleep(1);
            if (s.respond === 'functionThrows') {
              state.failed = true;
              throw new Error('fuzz: the responder failed');
            }
            return 'the answer';
          };
  const o = s.options;
  return {
    ...(usesModel && { model: fuzzModel(scripted, (i) => usageOf.get(i) ?? 'default') }),
    ...(s.planner === 'function' && { planner }),
    tools: withApprovals(buildTools(s.tools, open, log), o.approvals),
    ...approvalDeadline(o.approvals),
    respond,
    ...(o.maxRounds !== undefined && { maxRounds: o.maxRounds }),
    ...(o.maxToolCalls !== undefined && { maxToolCalls: o.maxToolCalls }),
    ...(o.concurrency !== undefined && { concurrency: o.concurrency }),
    ...(o.timeout !== undefined && { timeout: o.timeout }),
    ...(o.planRetries !== undefined && { planRetries: o.planRetries }),
    ...(o.instant !== undefined && { instant: o.instant }),
    ...toolControl(o),
  };
}

/**
 * What the call asks decides, not its id (a call without one gets a random id, anew when a
 * crashed model call is made again): the same call is decided alike in every process.
 */
const oddCall = (call: ToolCall) =>
  ((JSON.stringify(call.arguments) ?? '').length + call.name.length) % 2 === 1;

/** How long a call waits for a decision under the deadline scenarios. */
const APPROVAL_DEADLINE_MS = 4;

/** The deadline options of the deadline scenarios. */
function approvalDeadline(approvals: ApprovalsData | undefined) {
  if (approvals === 'deadline') return { approvalTimeoutMs: APPROVAL_DEADLINE_MS };
  if (approvals === 'deadlineFail') {
    return { approvalTimeoutMs: APPROVAL_DEADLINE_MS, onApprovalTimeout: 'fail' as const };
  }
  return {};
}

/** Tools whose calls need approval when what they ask is odd (see oddCall), for SPEC H2. */
function withApprovals(tools: AnyTool[], approvals: ApprovalsData | undefined): AnyTool[] {
  if (approvals === undefined || approvals === 'none') return tools;
  return tools.map((tool) => ({
    ...tool,
    needsApproval: (args: unknown) => oddCall({ id: '', name: tool.name, arguments: args }),
  }));
}

/**
 * The run options a scenario's runs take (every process of a durable one): the `approve`
 * callback, which approves calls of even-numbered tools and rejects the rest, after a tick,
 * or leaves every call to its deadline.
 */
export function runOptionsOf(s: Scenario): { readonly approve?: ApproveCallback } {
  const { approvals } = s.options;
  if (approvals === undefined || approvals === 'none') return {};
  if (approvals !== 'decide') return { approve: () => undefined };
  return {
    approve: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return Number(request.tool.slice(1)) % 2 === 0
        ? true
        : { approved: false, reason: 'fuzz rejects it' };
    },
  };
}

/** The hooks and invalidToolCall a scenario asks for (SPEC H1, H4). */
function toolControl(o: Partial<ToolControlData>): ToolCallHooks & {
  invalidToolCall?: InvalidToolCallPolicy;
} {
  const invalid: Record<InvalidCalls, InvalidToolCallPolicy | undefined> = {
    default: undefined,
    fail: 'fail',
    fixed: 'Those arguments do not fit the tool; try again.',
    worded: ({ call, problem }) => `${call.name}: ${problem}`,
  };
  const policy = invalid[o.invalidToolCall ?? 'default'];
  const hooks: Record<Hooks, ToolCallHooks> = {
    none: {},
    cancelSome: {
      beforeToolCall: (call) => (oddCall(call) ? { cancel: 'fuzz says no' } : undefined),
    },
    replaceArguments: {
      beforeToolCall: (call) => (oddCall(call) ? { arguments: { replaced: true } } : undefined),
    },
    asyncCancel: {
      beforeToolCall: async (call) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        return oddCall(call) ? { cancel: 'later' } : undefined;
      },
    },
    throwBefore: {
      beforeToolCall: (call) => {
        if (oddCall(call)) throw new Error('fuzz hook before');
      },
    },
    throwAfter: {
      afterToolCall: (call) => {
        if (oddCall(call)) throw new Error('fuzz hook after');
      },
    },
  };
  return { ...hooks[o.hooks ?? 'none'], ...(policy !== undefined && { invalidToolCall: policy }) };
}

export function buildLoop(
  s: LoopScenario,
  open: OpenThings,
  state: ModelState,
  extras?: BuildExtras,
) {
  return createToolLoop(loopOptions(s, open, state, extras));
}

export { VALID_JSON };
