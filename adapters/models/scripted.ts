import { AbortError, ConfigError, ModelError } from '../../src/errors.js';
import {
  generateToolCallId,
  type Message,
  parseToolArguments,
  type ToolCall,
  toolResultText,
} from '../../src/messages.js';
import { ResponseCollector } from '../../src/model/collect-stream.js';
import {
  type CallOptions,
  type FinishReason,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
  UNIFIED_FINISH_REASONS,
} from '../../src/model/language-model.js';
import { type Describes, describeOptions } from '../../src/options/describe.js';
import { satisfies } from '../../src/options/kinds.js';
import { text } from '../../src/options/more-kinds.js';
import { usage as makeUsage, type Usage } from '../../src/usage.js';

export interface ScriptedToolCall {
  /** Omit to have an id generated, as adapters do for providers that send none. */
  readonly id?: string;
  readonly name: string;
  /** The arguments object; sent as JSON text. */
  readonly arguments?: unknown;
  /** Raw argument text instead of `arguments`, e.g. malformed JSON to test recovery. */
  readonly argumentsText?: string;
}

/** One scripted model response. Every field is optional; `{}` answers with empty text. */
export interface ScriptedTurn {
  readonly text?: string;
  /** `text` split into these stream deltas (they are joined when `text` is omitted). */
  readonly chunks?: readonly string[];
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** Default: an estimate of ~4 characters per token for input and output. */
  readonly usage?: Partial<Usage>;
  /** Default: 'tool-calls' when there are tool calls, else 'stop'. */
  readonly finishReason?: FinishReason['unified'] | FinishReason;
  /** Wait this long before answering (before the first part, when streaming). */
  readonly latencyMs?: number;
  /** Wait this long between streamed parts. */
  readonly chunkDelayMs?: number;
  /** Throw this (after the latency) instead of answering, e.g. a retryable ModelError. */
  readonly error?: unknown;
}

export type ScriptFunction = (
  request: ModelRequest,
  callIndex: number,
) => ScriptedTurn | Promise<ScriptedTurn>;

/** A response, or a function of the request that returns one, for each expected call. */
export type ScriptStep = ScriptedTurn | ScriptFunction;

export interface ScriptedModelOptions {
  readonly modelId?: string;
  /** With a function script: the number of calls `assertComplete()` expects. */
  readonly expectedCalls?: number;
}

/** ScriptedModel's options described once (see src/options/describe.ts), for a function script. */
export const SCRIPTED_MODEL_OPTIONS = describeOptions('new ScriptedModel', {
  modelId: text((value) => `must be a non-empty string; got ${String(value)}`, {
    default: 'scripted-model',
  }),
  expectedCalls: satisfies<number>(
    (value) => Number.isInteger(value) && (value as number) >= 0,
    (value) => `must be an integer >= 0; got ${value}`,
    { defaultText: 'none (an array script: its length)' },
  ),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<ScriptedModelOptions, typeof SCRIPTED_MODEL_OPTIONS> = true;

/** The same for an array script, which expects one call per entry. */
const ARRAY_SCRIPT_OPTIONS = describeOptions('new ScriptedModel', {
  ...SCRIPTED_MODEL_OPTIONS.specs,
  expectedCalls: satisfies<number>(
    () => false,
    'is for function scripts; an array script expects one call per entry',
  ),
});

/** The model received more calls than it was scripted for. */
export class ScriptExhaustedError extends ModelError {
  static override readonly code: string = 'SCRIPT_EXHAUSTED';
}

/**
 * A deterministic LanguageModel for tests and examples: it answers from a script, records
 * every request it received, and fails loudly on a call nobody scripted. Use
 * `assertComplete()` at the end of a test to check that every scripted response was used.
 */
export class ScriptedModel implements LanguageModel {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider = 'scripted';
  readonly modelId: string;
  /** Every request received, in order (failed calls included). */
  readonly requests: ModelRequest[] = [];
  readonly #script: readonly ScriptStep[] | ScriptFunction;
  readonly #expectedCalls: number | undefined;

  constructor(script: readonly ScriptStep[] | ScriptFunction, options: ScriptedModelOptions = {}) {
    if (typeof script !== 'function' && !Array.isArray(script)) {
      throw new ConfigError(
        'script',
        'must be an array of responses or a function (request, callIndex) => response',
      );
    }
    if (Array.isArray(script)) {
      script.forEach((step, index) => {
        if (typeof step !== 'function') validateTurn(step, `script[${index}]`);
      });
    }
    if (typeof options !== 'object' || options === null) {
      throw new ConfigError('options', 'must be an object such as { modelId, expectedCalls }');
    }
    const checked = (Array.isArray(script) ? ARRAY_SCRIPT_OPTIONS : SCRIPTED_MODEL_OPTIONS).parse(
      options,
    );
    this.#script = script;
    this.modelId = checked.modelId;
    this.#expectedCalls = Array.isArray(script) ? script.length : checked.expectedCalls;
  }

  get callCount(): number {
    return this.requests.length;
  }

  get lastRequest(): ModelRequest | undefined {
    return this.requests.at(-1);
  }

  /** Throws unless every scripted response was used (or `expectedCalls` calls were made). */
  assertComplete(): void {
    if (this.#expectedCalls === undefined || this.callCount === this.#expectedCalls) return;
    throw new Error(
      `ScriptedModel '${this.modelId}' expected ${this.#expectedCalls} call(s) but received ${this.callCount}` +
        (this.callCount < this.#expectedCalls
          ? `; response #${this.callCount + 1} was never requested`
          : ''),
    );
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    // The same parts `stream` yields, folded without an async generator: the scripted model
    // is the floor the bench measures machines against, so it should cost next to nothing.
    const { parts } = await this.#answer(request, options.signal);
    const collector = new ResponseCollector();
    for (const part of parts) collector.add(part);
    return collector.response();
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    const { parts, turn } = await this.#answer(request, signal);
    const delay = turn.chunkDelayMs ?? 0;
    for (const [i, part] of parts.entries()) {
      if (i > 0) await sleep(delay, signal);
      yield part;
    }
  }

  async #answer(
    request: ModelRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ parts: StreamPart[]; turn: ScriptedTurn }> {
    // An aborted call never reaches the model: it consumes no scripted response.
    if (signal?.aborted)
      throw new AbortError('The model call was aborted', { cause: signal.reason });
    const callIndex = this.requests.length;
    this.requests.push(request);
    const turn = await this.#turnFor(request, callIndex);
    await sleep(turn.latencyMs ?? 0, signal);
    if (turn.error !== undefined) throw turn.error;
    return { parts: partsOf(turn, request), turn };
  }

  async #turnFor(request: ModelRequest, callIndex: number): Promise<ScriptedTurn> {
    const script = this.#script;
    let step: ScriptStep | undefined;
    if (typeof script === 'function') step = script;
    else {
      step = script[callIndex];
      if (step === undefined) {
        const last = request.messages.last;
        throw new ScriptExhaustedError(
          `ScriptedModel '${this.modelId}' received call #${callIndex + 1} but was scripted for ${script.length}. ` +
            `The request ended with a ${last ? `${last.role} message` : 'empty transcript'}` +
            (last && 'content' in last && last.content
              ? `: ${JSON.stringify(last.content.slice(0, 120))}`
              : '') +
            attachedText(last),
        );
      }
    }
    if (typeof step !== 'function') return step;
    const turn = await step(request, callIndex);
    validateTurn(turn, `script response for call #${callIndex + 1}`);
    return turn;
  }
}

const FINISH_REASONS: readonly string[] = UNIFIED_FINISH_REASONS;

function validateTurn(turn: ScriptedTurn, where: string): void {
  const fail = (message: string) => {
    throw new ConfigError('script', `${where}${message}`);
  };
  if (typeof turn !== 'object' || turn === null) fail(' must be an object');
  if (turn.text !== undefined && typeof turn.text !== 'string') fail('.text must be a string');
  if (turn.chunks !== undefined) {
    if (!Array.isArray(turn.chunks) || turn.chunks.some((c) => typeof c !== 'string')) {
      fail('.chunks must be an array of strings');
    }
    if (turn.text !== undefined && turn.chunks.join('') !== turn.text)
      fail(`.chunks must join to ${where}.text`);
  }
  if (turn.toolCalls !== undefined && !Array.isArray(turn.toolCalls))
    fail('.toolCalls must be an array');
  for (const [i, call] of (turn.toolCalls ?? []).entries()) {
    if (typeof call?.name !== 'string' || call.name === '')
      fail(`.toolCalls[${i}] needs a tool name`);
  }
  for (const key of ['latencyMs', 'chunkDelayMs'] as const) {
    const value = turn[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0))
      fail(`.${key} must be a number >= 0`);
  }
  const reason =
    typeof turn.finishReason === 'object' ? turn.finishReason?.unified : turn.finishReason;
  if (reason !== undefined && !FINISH_REASONS.includes(reason)) {
    fail(`.finishReason must be one of ${FINISH_REASONS.join(', ')}`);
  }
}

function partsOf(turn: ScriptedTurn, request: ModelRequest): StreamPart[] {
  const parts: StreamPart[] = [];
  const chunks = turn.chunks ?? (turn.text ? [turn.text] : []);
  for (const delta of chunks) parts.push({ type: 'text-delta', delta });
  let argumentChars = 0;
  for (const [index, scripted] of (turn.toolCalls ?? []).entries()) {
    const id = scripted.id || generateToolCallId();
    const text = scripted.argumentsText ?? JSON.stringify(scripted.arguments ?? {});
    argumentChars += text.length;
    // Split the arguments as providers do, so consumers of deltas are exercised.
    const half = Math.ceil(text.length / 2);
    parts.push({
      type: 'tool-call-delta',
      index,
      id,
      name: scripted.name,
      argumentsDelta: text.slice(0, half),
    });
    if (half < text.length)
      parts.push({ type: 'tool-call-delta', index, argumentsDelta: text.slice(half) });
    const toolCall: ToolCall = { id, name: scripted.name, ...parseToolArguments(text) };
    parts.push({ type: 'tool-call', toolCall });
  }
  const outputChars = chunks.join('').length + argumentChars;
  parts.push({
    type: 'usage',
    usage: makeUsage(turn.usage ?? estimateUsage(request, outputChars)),
  });
  parts.push({ type: 'finish', finishReason: finishReasonOf(turn) });
  return parts;
}

function finishReasonOf(turn: ScriptedTurn): FinishReason {
  const reason = turn.finishReason ?? (turn.toolCalls?.length ? 'tool-calls' : 'stop');
  return typeof reason === 'string' ? { unified: reason, raw: reason } : reason;
}

/** ~4 characters per token: enough for limits and budgets to behave plausibly in tests. */
function estimateUsage(request: ModelRequest, outputChars: number): Partial<Usage> {
  let inputChars = 0;
  for (const message of request.messages) {
    inputChars += message.role === 'tool' ? toolResultText(message).length : message.content.length;
  }
  for (const tool of request.tools ?? []) inputChars += tool.description.length + tool.name.length;
  return { inputTokens: Math.ceil(inputChars / 4), outputTokens: Math.ceil(outputChars / 4) };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted)
    return Promise.reject(new AbortError('The model call was aborted', { cause: signal.reason }));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError('The model call was aborted', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** ` (with 2 attachments: image/png screen.png, application/pdf)`, or '' when none. */
function attachedText(message: Message | undefined): string {
  const attachments =
    message && (message.role === 'user' || message.role === 'tool')
      ? message.attachments
      : undefined;
  if (!attachments?.length) return '';
  const each = attachments.map((a) => (a.name ? `${a.mediaType} ${a.name}` : a.mediaType));
  return ` (with ${attachments.length} attachment(s): ${each.join(', ')})`;
}
