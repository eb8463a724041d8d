import fc from 'fast-check';

// What a fuzz run is made of, as plain data: fast-check shrinks it and prints it, and
// fixtures.ts turns it into models, tools and options. Every delay is tiny (0–20 ms) so a run
// takes milliseconds; "hang" means "until aborted", and a scenario with a hang always has a
// bound (an abort, or a run limit that cancels what is in flight).

/** How a tool behaves when called. */
export type ToolBehaviour =
  | 'json' // returns `value`
  | 'bigint'
  | 'nestedBigint'
  | 'circular'
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'nan'
  | 'date'
  | 'map'
  | 'error' // returns (not throws) an Error object
  | 'attachments' // returns toolOutput(value, attachments): images and files (ATTACHMENT_SETS)
  | 'throw'
  | 'throwNonError'
  | 'hang' // waits for its AbortSignal
  | 'gen' // async generator of `items` items, `delayMs` apart
  | 'genThrows' // yields once, then throws
  | 'genFinallyThrows' // its finally block throws when it is closed
  | 'genHang' // yields once, then waits for its AbortSignal
  | 'genBigint' // yields a BigInt
  | 'syncReturnIter' // hand-written iterator whose return() is synchronous
  | 'syncReturnThrows'; // hand-written iterator whose return() throws synchronously

export const HANGING_TOOLS: readonly ToolBehaviour[] = ['hang', 'genHang'];

export interface ToolData {
  readonly behaviour: ToolBehaviour;
  readonly value: unknown;
  readonly delayMs: number;
  readonly items: number;
  readonly duplicateCallWarn: boolean;
  readonly returnDirect: boolean;
}

/** Tool-call arguments: matching the schema `{ n?: number }`, not matching, not JSON, absent. */
export type ArgsKind = 'valid' | 'invalid' | 'malformed' | 'none';

export interface CallData {
  /** A tool by index (modulo the tools there are), an unknown name, or the built-in stop tool. */
  readonly target: number | 'unknown' | 'stop';
  readonly args: ArgsKind;
  readonly n: number;
  /** Give the call an id (else the model leaves it out and one is generated). */
  readonly withId: boolean;
}

/** How a model call reports usage; `malformed`: the whole response is of the wrong shape (SPEC Q3). */
export type UsageKind =
  | 'default'
  | 'none'
  | 'zero'
  | 'big'
  | 'inconsistent'
  | 'outputOnly'
  | 'malformed';

export type AnswerData =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'json'; readonly valid: boolean; readonly prose: boolean }
  | { readonly kind: 'empty' }
  | { readonly kind: 'calls'; readonly calls: readonly CallData[] }
  | { readonly kind: 'fence'; readonly size: number; readonly lang: boolean }
  | { readonly kind: 'throw'; readonly typed: boolean }
  | { readonly kind: 'hang' };

export interface TurnData {
  readonly answer: AnswerData;
  readonly latencyMs: number;
  readonly chunkDelayMs: number;
  readonly usage: UsageKind;
}

export type Structured = 'none' | 'zod' | 'jsonSchema' | 'jsonObject';
export type Validate = 'none' | 'rejectOnce' | 'rejectAlways' | 'throws' | 'async';

/**
 * Tool-call control (SPEC H1, H4): what `beforeToolCall` / `afterToolCall` do (decided by the
 * call's id, so a resumed run's hooks decide alike), and `invalidToolCall`.
 */
export type Hooks =
  | 'none'
  | 'cancelSome'
  | 'replaceArguments'
  | 'asyncCancel'
  | 'throwBefore'
  | 'throwAfter';
export type InvalidCalls = 'default' | 'fail' | 'fixed' | 'worded';
/**
 * Approvals (SPEC H2): no tool needs them, or some calls do (decided by what the call asks)
 * and the run's `approve` callback approves or rejects them, or leaves them to a short
 * deadline that rejects them or fails the run.
 */
export type ApprovalsData = 'none' | 'decide' | 'deadline' | 'deadlineFail';

export interface ToolControlData {
  readonly hooks: Hooks;
  readonly invalidToolCall: InvalidCalls;
  readonly approvals?: ApprovalsData;
}

/** The prices fuzz runs are priced with: a token costs $0.001 in, $0.002 out. */
export const FUZZ_PRICES = { inputPerMillion: 1_000, outputPerMillion: 2_000 } as const;

export interface ChainOptionsData extends ToolControlData {
  /** 0 (no model call) and Infinity (no limit) too (SPEC H3). */
  readonly maxIterations?: number;
  readonly maxTokens?: number;
  /** SPEC H3: tool calls per run. */
  readonly maxToolCalls?: number;
  /** SPEC H3: US dollars per run, priced with FUZZ_PRICES. */
  readonly maxCost?: number;
  /** Price the run (FUZZ_PRICES) without a cost limit: its cost must still add up. */
  readonly priced?: boolean;
  /** modelSettings.maxOutputTokens: the output reserved by the check before each call. */
  readonly maxOutputTokens?: number;
  readonly maxExecutionTime?: number;
  readonly earlyStopping?: 'force' | 'generate';
  readonly structured: Structured;
  readonly validate: Validate;
  readonly toolTimeoutMs?: number;
  readonly toolConcurrency?: number;
  readonly streamBatchSize?: number;
}

export interface ChainScenario {
  readonly kind: 'chain';
  readonly tools: readonly ToolData[];
  readonly turns: readonly TurnData[];
  readonly options: ChainOptionsData;
  /** Abort the run's signal this many ms after it starts (-1: before it starts). */
  readonly abortAtMs?: number;
  readonly via: 'invoke' | 'stream';
}

export interface CommandData {
  readonly target: number | 'unknown' | 'blank';
  readonly args: 'valid' | 'invalid' | 'nonObject';
}

export type PlanData =
  | {
      readonly kind: 'plan';
      readonly action: 'execute' | 'response' | 'EXECUTE' | 'bogus' | 'missing';
      readonly listKey: 'executionCommands' | 'toolCommands' | 'toolCommand';
      readonly commands: readonly CommandData[];
      readonly useTool?: boolean;
    }
  | { readonly kind: 'garbage'; readonly text: string }
  | { readonly kind: 'notObject'; readonly value: number | null | readonly number[] }
  | { readonly kind: 'throw' }
  | { readonly kind: 'hang' };

export interface PlanStepData {
  readonly plan: PlanData;
  /** How a planner function hands it over; a model planner always answers text. */
  readonly form: 'object' | 'text' | 'prose' | 'stream';
  readonly latencyMs: number;
  readonly usage: UsageKind;
}

export interface LoopScenario {
  readonly kind: 'loop';
  readonly tools: readonly ToolData[];
  readonly planner: 'model' | 'function';
  readonly plans: readonly PlanStepData[];
  readonly respond: 'model' | 'none' | 'function' | 'functionThrows';
  readonly response: TurnData;
  readonly options: Partial<ToolControlData> & {
    readonly maxRounds?: number;
    /** SPEC H3: commands executed per run. */
    readonly maxToolCalls?: number;
    readonly concurrency?: number;
    readonly timeout?: number;
    readonly planRetries?: number;
    readonly instant?: boolean;
  };
  readonly abortAtMs?: number;
  readonly via: 'invoke' | 'stream';
}

export type Scenario = ChainScenario | LoopScenario;

const small = fc.integer({ min: 0, max: 20 });
/**
 * Undefined (the option's default) half the time. (fast-check builds the nil value with
 * probability 1 / freq: freq 1, as this once said, made every option its default.)
 */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });

const toolBehaviour = fc.constantFrom<ToolBehaviour>(
  'json',
  'json',
  'bigint',
  'bigint',
  'nestedBigint',
  'circular',
  'circular',
  'undefined',
  'function',
  'symbol',
  'nan',
  'date',
  'map',
  'error',
  'attachments',
  'attachments',
  'throw',
  'throwNonError',
  'hang',
  'gen',
  'gen',
  'genThrows',
  'genFinallyThrows',
  'genHang',
  'genBigint',
  'syncReturnIter',
  'syncReturnThrows',
);

/** Mostly one to three tools; `returnDirect` a third of the time. */
const toolsArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant<ToolData[]>([]) },
  {
    weight: 7,
    arbitrary: fc.array(
      fc.record({
        behaviour: toolBehaviour,
        value: fc.jsonValue({ maxDepth: 2 }),
        delayMs: small,
        items: fc.integer({ min: 0, max: 12 }),
        duplicateCallWarn: fc.boolean(),
        returnDirect: fc.integer({ min: 0, max: 2 }).map((i) => i === 0),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  },
);

const callArb: fc.Arbitrary<CallData> = fc.record({
  target: fc.oneof(
    { weight: 6, arbitrary: fc.nat({ max: 5 }) },
    { weight: 1, arbitrary: fc.constant('unknown' as const) },
    { weight: 3, arbitrary: fc.constant('stop' as const) },
  ),
  args: fc.constantFrom<ArgsKind>('valid', 'valid', 'valid', 'invalid', 'malformed', 'none'),
  n: fc.nat({ max: 1 }),
  withId: fc.boolean(),
});

const answerArb: fc.Arbitrary<AnswerData> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('text'), text: fc.string() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('json'), valid: fc.boolean(), prose: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('calls'),
      // One call alone in its step half the time: what returnDirect needs.
      calls: fc.oneof(fc.tuple(callArb), fc.array(callArb, { minLength: 1, maxLength: 3 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fence'),
      // 200k characters: instant when scans are linear, seconds (> the bound) when quadratic.
      size: fc.constantFrom(2_000, 200_000),
      lang: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('throw'), typed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

const usageArb = fc.constantFrom<UsageKind>(
  'default',
  'default',
  'default',
  'default',
  'none',
  'zero',
  'big',
  'inconsistent',
  'outputOnly',
  'malformed',
);

const turnArb: fc.Arbitrary<TurnData> = fc.record({
  answer: answerArb,
  latencyMs: fc.oneof(fc.constant(0), small),
  chunkDelayMs: fc.integer({ min: 0, max: 3 }),
  usage: usageArb,
});

/** Mostly no hooks, so most runs still exercise the tools themselves. */
const hooksArb = fc.constantFrom<Hooks>(
  'none',
  'none',
  'none',
  'cancelSome',
  'replaceArguments',
  'asyncCancel',
  'throwBefore',
  'throwAfter',
);
/** Mostly none, so most runs are not slowed by deadlines. */
const approvalsArb = fc.constantFrom<ApprovalsData>(
  'none',
  'none',
  'none',
  'decide',
  'deadline',
  'deadlineFail',
);
const invalidCallsArb = fc.constantFrom<InvalidCalls>(
  'default',
  'default',
  'fail',
  'fixed',
  'worded',
);

const chainOptionsArb: fc.Arbitrary<ChainOptionsData> = fc
  .record({
    hooks: hooksArb,
    invalidToolCall: invalidCallsArb,
    approvals: approvalsArb,
    maxIterations: maybe(
      fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 1, max: 6 }) },
        { weight: 1, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.constant(Number.POSITIVE_INFINITY) },
      ),
    ),
    maxTokens: maybe(fc.integer({ min: 50, max: 4_000 })),
    maxToolCalls: maybe(fc.integer({ min: 0, max: 4 })),
    // In dollars: 0.01 to 4, i.e. about 5 to 4,000 tokens at FUZZ_PRICES.
    maxCost: maybe(fc.integer({ min: 1, max: 400 }).map((cents) => cents / 100)),
    priced: fc.boolean(),
    maxOutputTokens: maybe(fc.integer({ min: 1, max: 500 })),
    maxExecutionTime: maybe(fc.integer({ min: 5, max: 80 })),
    earlyStopping: maybe(fc.constantFrom('force' as const, 'generate' as const)),
    structured: fc.constantFrom<Structured>('none', 'none', 'zod', 'jsonSchema', 'jsonObject'),
    validate: fc.constantFrom<Validate>(
      'none',
      'none',
      'none',
      'rejectOnce',
      'rejectAlways',
      'throws',
      'async',
    ),
    toolTimeoutMs: maybe(fc.integer({ min: 5, max: 30 })),
    toolConcurrency: maybe(fc.integer({ min: 1, max: 2 })),
    streamBatchSize: maybe(fc.integer({ min: 1, max: 3 })),
  })
  // 'force' ends with a text stop message: createChain refuses it with structured output.
  .map((o) =>
    o.earlyStopping === 'force' && o.structured !== 'none'
      ? { ...o, earlyStopping: 'generate' as const }
      : o,
  );

/** A random abort in about one run of four (-1: before the run starts). */
const abortArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.integer({ min: -1, max: 60 }) },
);

/** A waiting tool or model with nothing to end it would hang by design: give it an abort. */
function bounded<S extends { abortAtMs?: number }>(s: S, hangs: boolean): S {
  return hangs && s.abortAtMs === undefined ? { ...s, abortAtMs: 30 } : s;
}

export const STREAMING_TOOLS: readonly ToolBehaviour[] = [
  'gen',
  'genThrows',
  'genFinallyThrows',
  'genHang',
  'genBigint',
  'syncReturnIter',
  'syncReturnThrows',
];

/** Calls a tool that streams, then stops its stream: random turns rarely line that up. */
const streamScript: fc.Arbitrary<TurnData[]> = fc
  .tuple(turnArb, turnArb, fc.array(turnArb, { maxLength: 3 }))
  .map(([open, stop, rest]) => [
    {
      ...open,
      answer: {
        kind: 'calls' as const,
        calls: [{ target: 0, args: 'valid' as const, n: 0, withId: true }],
      },
    },
    {
      ...stop,
      answer: {
        kind: 'calls' as const,
        calls: [{ target: 'stop' as const, args: 'valid' as const, n: 0, withId: true }],
      },
    },
    ...rest,
  ]);

export const chainScenarioArb: fc.Arbitrary<ChainScenario> = fc
  .record({
    kind: fc.constant('chain' as const),
    tools: toolsArb,
    turns: fc.oneof({ weight: 3, arbitrary: fc.array(turnArb, { maxLength: 6 }) }, streamScript),
    options: chainOptionsArb,
    abortAtMs: abortArb,
    via: fc.constantFrom('invoke' as const, 'stream' as const),
  })
  // The stream script's first call goes to tool 0: make it one that streams.
  .chain((s) =>
    s.turns[1]?.answer.kind === 'calls' && s.turns[1].answer.calls[0]?.target === 'stop'
      ? fc.constantFrom(...STREAMING_TOOLS).map((behaviour) => ({
          ...s,
          tools: s.tools.length
            ? [{ ...(s.tools[0] as ToolData), behaviour }, ...s.tools.slice(1)]
            : s.tools,
        }))
      : fc.constant(s),
  )
  .map((s) =>
    bounded(
      s,
      s.tools.some((t) => HANGING_TOOLS.includes(t.behaviour)) ||
        s.turns.some((t) => t.answer.kind === 'hang'),
    ),
  );

const commandArb: fc.Arbitrary<CommandData> = fc.record({
  target: fc.oneof(
    { weight: 6, arbitrary: fc.nat({ max: 5 }) },
    { weight: 1, arbitrary: fc.constantFrom('unknown' as const, 'blank' as const) },
  ),
  args: fc.constantFrom(
    'valid' as const,
    'valid' as const,
    'invalid' as const,
    'nonObject' as const,
  ),
});

const planArb: fc.Arbitrary<PlanData> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        kind: fc.constant('plan' as const),
        action: fc.constantFrom(
          'execute' as const,
          'execute' as const,
          'response' as const,
          'EXECUTE' as const,
          'bogus' as const,
          'missing' as const,
        ),
        listKey: fc.constantFrom(
          'executionCommands' as const,
          'executionCommands' as const,
          'toolCommands' as const,
          'toolCommand' as const,
        ),
        commands: fc.array(commandArb, { maxLength: 3 }),
        useTool: fc.boolean(),
      },
      { requiredKeys: ['kind', 'action', 'listKey', 'commands'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('garbage' as const), text: fc.string() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('notObject' as const),
      value: fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 })),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'throw' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

const planStepArb: fc.Arbitrary<PlanStepData> = fc.record({
  plan: planArb,
  form: fc.constantFrom('object' as const, 'text' as const, 'prose' as const, 'stream' as const),
  latencyMs: fc.oneof(fc.constant(0), small),
  usage: usageArb,
});

export const loopScenarioArb: fc.Arbitrary<LoopScenario> = fc
  .record({
    kind: fc.constant('loop' as const),
    tools: toolsArb,
    planner: fc.constantFrom('model' as const, 'function' as const),
    plans: fc.array(planStepArb, { maxLength: 5 }),
    respond: fc.constantFrom(
      'model' as const,
      'model' as const,
      'none' as const,
      'function' as const,
      'functionThrows' as const,
    ),
    response: turnArb.map((t) =>
      t.answer.kind === 'calls' ? { ...t, answer: { kind: 'text' as const, text: 'answer' } } : t,
    ),
    options: fc.record(
      {
        maxRounds: fc.integer({ min: 0, max: 4 }),
        maxToolCalls: fc.integer({ min: 0, max: 4 }),
        concurrency: fc.integer({ min: 1, max: 3 }),
        timeout: fc.integer({ min: 5, max: 100 }),
        planRetries: fc.integer({ min: 0, max: 2 }),
        instant: fc.boolean(),
        hooks: hooksArb,
        invalidToolCall: invalidCallsArb,
        approvals: approvalsArb,
      },
      { requiredKeys: [] },
    ),
    abortAtMs: abortArb,
    via: fc.constantFrom('invoke' as const, 'stream' as const),
  })
  .map((s) =>
    bounded(
      s,
      s.tools.some((t) => HANGING_TOOLS.includes(t.behaviour)) ||
        s.plans.some((p) => p.plan.kind === 'hang') ||
        (s.respond === 'model' && s.response.answer.kind === 'hang'),
    ),
  );
