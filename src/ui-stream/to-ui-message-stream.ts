import { ApprovalPendingError } from '../approvals/approval.js';
import { attachmentUrl } from '../attachments.js';
import type { ChainStreamEvent } from '../chain/run-types.js';
import { AbortError, StatecraftError } from '../errors.js';
import { jsonSafeOutput } from '../json-safe.js';
import type { ToolResult } from '../messages.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { flag, func, satisfies } from '../options/kinds.js';
import { OptionProblems } from '../options/problems.js';
import type { ToolLoopStreamEvent } from '../tool-loop/run-types.js';
import type { Usage } from '../usage.js';
import { approvalIdOf } from './approval-id.js';
import type { UIFinishReason, UIMessageChunk } from './chunks.js';

// SPEC E3: a run's stream events as the AI SDK's UI message stream, the chunks `useChat` and
// `Chat` read. One run is one assistant message: `start`, then a step per model call (a
// tool loop: per round, and one for its response), text as `text-*`, each tool call as
// `tool-input-*` then `tool-output-*`, approvals as `tool-approval-*`, the result as a
// `data-result` part, and `finish` (or `error` / `abort`). statecraft streams no reasoning
// and gives a tool call whole, so a call's input arrives as one `tool-input-delta`.

/** A chain's or a tool loop's stream events, as `chain.stream(…)` / `loop.stream(…)` yield them. */
export type UIStreamSource = AsyncIterable<ChainStreamEvent | ToolLoopStreamEvent>;

/** The options of `toUIMessageStream(events, options)`. */
export interface UIMessageStreamOptions {
  /**
   * The assistant message's id. Give the id of the message that holds an approval when
   * continuing after it (the POST's `messageId`), so the page updates that message instead of
   * adding a second one; a fresh id otherwise.
   */
  readonly messageId?: string;
  /** The durable run's id: it goes into each approval's id and the message's metadata. */
  readonly runId?: string;
  /**
   * End this stream (`finish`, reason `tool-calls`) once the run waits on a person, leaving
   * the run going: call `toUIMessageStream` again with the same `events` to write the rest,
   * after the browser's answer was decided (`decideUIApprovals`).
   */
  readonly pauseOnApproval?: boolean;
  /**
   * The text the page shows for a failed run's error. By default a generic text, as the AI
   * SDK's own stream does: an error's message can carry a provider's response body, a signed
   * URL or a file path, none of it for the browser. Return the message to show it.
   */
  readonly errorText?: (error: unknown) => string;
}

/** What the page reads of a failed run's error unless `errorText` says otherwise. */
const GENERIC_ERROR_TEXT = 'An error occurred.';

/** toUIMessageStream()'s options described once (see src/options/describe.ts). */
export const UI_MESSAGE_STREAM_OPTIONS = describeOptions('toUIMessageStream', {
  messageId: satisfies<string>(
    (value) => typeof value === 'string' && value !== '',
    'must be a non-empty string',
    { defaultText: 'a fresh id' },
  ),
  runId: satisfies<string>(
    (value) => typeof value === 'string' && value !== '',
    'must be a non-empty string',
  ),
  pauseOnApproval: flag({ default: false }),
  errorText: func<(error: unknown) => string>('(error) => string', {
    defaultText: `'${GENERIC_ERROR_TEXT}'`,
  }),
});
// tsc fails here, naming the option, when UIMessageStreamOptions and its description drift apart.
const _described: Describes<UIMessageStreamOptions, typeof UI_MESSAGE_STREAM_OPTIONS> = true;

type Event = ChainStreamEvent | ToolLoopStreamEvent;

/**
 * Where a run's events are read from, kept per `events` object: a stream paused on an
 * approval leaves the iterator (and a read already asked for) to the next stream on them.
 */
interface Reading {
  readonly iterator: AsyncIterator<Event>;
  pending: Promise<IteratorResult<Event>> | undefined;
  /** The calls asked about and not yet decided, across streams. */
  readonly awaiting: Set<string>;
  /** Calls the stream said were denied: their failed results are not written again. */
  readonly denied: Set<string>;
  ended: boolean;
}
const readings = new WeakMap<object, Reading>();

function readingOf(events: UIStreamSource): Reading {
  let reading = readings.get(events);
  if (reading === undefined) {
    reading = {
      iterator: events[Symbol.asyncIterator](),
      pending: undefined,
      awaiting: new Set(),
      denied: new Set(),
      ended: false,
    };
    readings.set(events, reading);
  }
  return reading;
}

/**
 * A run's events as the AI SDK's UI message stream: a `ReadableStream` of chunk objects, as
 * `createUIMessageStreamResponse({ stream })` takes it, or written as SSE by
 * `uiMessageStreamResponse` / `writeUIMessageStream`. Cancelling the stream stops the run
 * (as breaking out of `stream()` does), unless it has ended or paused on an approval.
 */
export function toUIMessageStream(
  events: UIStreamSource,
  options: UIMessageStreamOptions = {},
): ReadableStream<UIMessageChunk> {
  const problems = new OptionProblems('toUIMessageStream');
  if (events === null || typeof events !== 'object' || !(Symbol.asyncIterator in events)) {
    problems.add('events', 'must be the events of chain.stream(…) or loop.stream(…)');
  }
  const isObject = typeof options === 'object' && options !== null;
  if (!isObject) problems.add('options', 'must be an object');
  const checked = UI_MESSAGE_STREAM_OPTIONS.collect(isObject ? options : {}, problems);
  problems.throwIfAny();
  const reading = readingOf(events);
  const chunks = writeRun(reading, {
    messageId: checked.messageId ?? globalThis.crypto.randomUUID(),
    runId: checked.runId,
    pauseOnApproval: checked.pauseOnApproval,
    errorText: checked.errorText ?? genericErrorText,
  });
  let paused = false;
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) {
        paused = next.value === 'paused';
        controller.close();
      } else controller.enqueue(next.value);
    },
    async cancel() {
      // The run first: a read waiting on it then ends, and so does the writer waiting on it.
      if (!paused && !reading.ended) {
        reading.ended = true;
        await reading.iterator.return?.();
      }
      void chunks.return('cancelled');
    },
  });
}

interface WriteOptions {
  readonly messageId: string;
  readonly runId: string | undefined;
  readonly pauseOnApproval: boolean;
  readonly errorText: (error: unknown) => string;
}

function genericErrorText(): string {
  return GENERIC_ERROR_TEXT;
}

/** Resolves on the next turn of the event loop: what the run had queued by then is read. */
function nextTurn(): Promise<typeof NEXT_TURN> {
  return new Promise((resolve) => setTimeout(() => resolve(NEXT_TURN), 0));
}
const NEXT_TURN = Symbol('next turn');

async function* writeRun(
  reading: Reading,
  options: WriteOptions,
): AsyncGenerator<UIMessageChunk, 'ended' | 'paused' | 'cancelled'> {
  const { runId } = options;
  yield {
    type: 'start',
    messageId: options.messageId,
    ...(runId !== undefined && { messageMetadata: { runId } }),
  };
  if (reading.ended) {
    yield { type: 'finish', finishReason: 'stop' };
    return 'ended';
  }
  const writer = new StepWriter(runId ?? '', reading);
  for (;;) {
    // Paused on an approval: what the run queued with it (other calls asked at once, their
    // results) still goes out; the first read that waits is kept for the next stream.
    const waiting = options.pauseOnApproval && reading.awaiting.size > 0;
    const read = reading.pending ?? reading.iterator.next();
    reading.pending = undefined;
    let next: IteratorResult<Event> | typeof NEXT_TURN;
    try {
      next = waiting ? await Promise.race([read, nextTurn()]) : await read;
    } catch (error) {
      reading.ended = true;
      yield* writer.close();
      yield* failure(error, options);
      return 'ended';
    }
    if (next === NEXT_TURN) {
      read.catch(() => undefined); // read by the next stream; never an unhandled rejection
      reading.pending = read;
      yield* writer.close();
      yield { type: 'finish', finishReason: 'tool-calls' };
      return 'paused';
    }
    if (next.done) {
      reading.ended = true;
      yield* writer.close();
      yield { type: 'finish', finishReason: 'stop' };
      return 'ended';
    }
    const event = next.value;
    if (event.type === 'final') {
      yield* writer.close();
      if (event.result !== undefined) {
        yield { type: 'data-result', id: 'result', data: resultData(event.result) };
        const metadata = metadataOf(runId, event.result);
        if (metadata !== undefined) yield { type: 'message-metadata', messageMetadata: metadata };
      }
      continue;
    }
    yield* writer.write(event);
  }
}

/** How a run that threw ends its message: parked, cancelled, or failed. */
function* failure(error: unknown, options: WriteOptions): Generator<UIMessageChunk> {
  // Parked for a person (parkForApproval): the approval requests are out, the message ends
  // as a step that called tools does; the run goes on after its resume.
  if (ApprovalPendingError.isInstance(error)) {
    yield { type: 'finish', finishReason: 'tool-calls' };
    return;
  }
  if (AbortError.isInstance(error)) {
    yield { type: 'abort', reason: error.message };
    return;
  }
  yield {
    type: 'data-result',
    id: 'result',
    data: {
      status: 'failed',
      error: {
        code: StatecraftError.isInstance(error) ? error.code : 'ERROR',
        message: options.errorText(error),
      },
    },
  };
  yield { type: 'error', errorText: options.errorText(error) };
  yield { type: 'finish', finishReason: 'error' satisfies UIFinishReason };
}

/** The `data-result` part of a run that succeeded: its result and figures, JSON-safe. */
function resultData(result: object): unknown {
  const r = result as Record<string, unknown>;
  const pick = (key: string) => (r[key] === undefined ? {} : { [key]: r[key] });
  return jsonSafeOutput({
    status: 'succeeded',
    result: r.result,
    ...pick('text'),
    ...pick('answer'),
    ...pick('stopped'),
    ...pick('stopReason'),
    ...pick('usage'),
    ...pick('cost'),
  });
}

function metadataOf(runId: string | undefined, result: object): object | undefined {
  const { usage, cost } = result as { usage?: Usage; cost?: number };
  if (runId === undefined && usage === undefined) return undefined;
  return jsonSafeOutput({
    ...(runId !== undefined && { runId }),
    ...(usage !== undefined && { usage }),
    ...(cost !== undefined && { cost }),
  }) as object;
}

/**
 * The message's steps as they open and close: a step per model call (a chain's iteration,
 * a tool loop's round or response), its text block, its calls and their results.
 */
class StepWriter {
  #step: { key: string; hadResults: boolean } | undefined;
  #text: string | undefined;
  #texts = 0;
  /** Calls whose input was refused (tool-input-error): their failed result says nothing more. */
  readonly #inputErrors = new Set<string>();

  constructor(
    readonly runId: string,
    readonly reading: Reading,
  ) {}

  *write(event: Event): Generator<UIMessageChunk> {
    switch (event.type) {
      case 'text-delta': {
        const key = 'iteration' in event ? `model call ${event.iteration}` : 'response';
        if (this.#step !== undefined && (this.#step.key !== key || this.#step.hadResults)) {
          yield* this.close();
        }
        yield* this.#open(key);
        if (this.#text === undefined) {
          this.#texts += 1;
          this.#text = `text-${this.#texts}`;
          yield { type: 'text-start', id: this.#text };
        }
        yield { type: 'text-delta', id: this.#text, delta: event.delta };
        return;
      }
      case 'tool-call': {
        if (this.#step?.hadResults) yield* this.close();
        yield* this.#open(this.#step?.key ?? 'tools');
        yield* this.#endText();
        const { id, name, arguments: input, argumentsError } = event.toolCall;
        yield* this.#input(id, name, input, argumentsError);
        return;
      }
      case 'round-started':
        yield* this.close();
        return;
      case 'commands-planned': {
        // A round that plans no call (the planner responds) is no step of its own.
        if (event.plan.executionCommands.length === 0) return;
        yield* this.#open(`round ${event.roundIndex}`);
        let index = 0;
        for (const command of event.plan.executionCommands) {
          // The tool loop's own call ids: `round<n>_<index>`, as its approvals name them.
          yield* this.#input(
            `round${event.roundIndex + 1}_${index}`,
            command.toolName,
            command.toolKwargs,
          );
          index += 1;
        }
        return;
      }
      case 'tool-result':
        yield* this.#output(event.result);
        return;
      case 'record': {
        const { record } = event;
        yield* this.#output({
          toolCallId: `round${event.roundIndex + 1}_${event.index}`,
          name: record.toolName,
          output: record.result,
          success: record.success,
          ...(record.error !== null && { error: record.error }),
          ...(record.attachments !== undefined &&
            record.attachments.length > 0 && { attachments: record.attachments }),
        });
        return;
      }
      case 'approval-requested': {
        const { callId } = event.request;
        this.reading.awaiting.add(callId);
        yield* this.#endText();
        yield {
          type: 'tool-approval-request',
          approvalId: approvalIdOf(this.runId, callId),
          toolCallId: callId,
        };
        return;
      }
      case 'approval-decided': {
        const { callId, approved, reason } = event.decision;
        this.reading.awaiting.delete(callId);
        yield {
          type: 'tool-approval-response',
          approvalId: approvalIdOf(this.runId, callId),
          approved,
          ...(reason !== undefined && { reason }),
        };
        if (!approved) {
          this.reading.denied.add(callId);
          yield { type: 'tool-output-denied', toolCallId: callId };
        }
        return;
      }
      default:
        // `state` and `warning` events have no place in a chat message.
        return;
    }
  }

  *#input(
    toolCallId: string,
    toolName: string,
    input: unknown,
    argumentsError?: string,
  ): Generator<UIMessageChunk> {
    yield { type: 'tool-input-start', toolCallId, toolName };
    const text = typeof input === 'string' ? input : JSON.stringify(jsonSafeOutput(input));
    if (text !== undefined) yield { type: 'tool-input-delta', toolCallId, inputTextDelta: text };
    if (argumentsError !== undefined) {
      this.#inputErrors.add(toolCallId);
      yield { type: 'tool-input-error', toolCallId, toolName, input, errorText: argumentsError };
      return;
    }
    yield { type: 'tool-input-available', toolCallId, toolName, input: jsonSafeOutput(input) };
  }

  *#output(result: ToolResult): Generator<UIMessageChunk> {
    if (this.#step !== undefined) this.#step.hadResults = true;
    const { toolCallId } = result;
    if (this.reading.denied.has(toolCallId) || this.#inputErrors.has(toolCallId)) return;
    if (result.success) {
      yield { type: 'tool-output-available', toolCallId, output: jsonSafeOutput(result.output) };
    } else {
      yield {
        type: 'tool-output-error',
        toolCallId,
        errorText: result.error ?? `${result.name} failed`,
      };
    }
    for (const attachment of result.attachments ?? []) {
      yield { type: 'file', url: attachmentUrl(attachment), mediaType: attachment.mediaType };
    }
  }

  *#open(key: string): Generator<UIMessageChunk> {
    if (this.#step !== undefined) return;
    this.#step = { key, hadResults: false };
    yield { type: 'start-step' };
  }

  *#endText(): Generator<UIMessageChunk> {
    if (this.#text === undefined) return;
    yield { type: 'text-end', id: this.#text };
    this.#text = undefined;
  }

  *close(): Generator<UIMessageChunk> {
    yield* this.#endText();
    if (this.#step === undefined) return;
    this.#step = undefined;
    yield { type: 'finish-step' };
  }
}
