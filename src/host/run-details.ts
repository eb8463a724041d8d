import type { ApprovalDecision, ApprovalRequest } from '../approvals/approval.js';
import {
  type AttachmentSummary,
  attachmentsOf,
  summarizeAttachment,
} from '../attachment-summary.js';
import { costOf, type ModelPrice } from '../cost.js';
import type { Message, ToolCall, ToolResult } from '../messages.js';
import type { ModelRequest, ModelResponse } from '../model/language-model.js';
import { observedTime, type RunObservation } from '../observe/run-observation.js';
import type { HookedCall } from '../tools/hooks.js';
import { addUsage, type Usage, ZERO_USAGE } from '../usage.js';

// SPEC A5: a debug view of a run — every model call with its compiled request, response,
// usage and latency, every tool call with its result — as plain JSON, and a printer for it.

export interface ModelCallDetail {
  /** 1-based, in call order. */
  readonly index: number;
  /** What the call was for: the chain's generation, or a tool loop's `plan` / `respond`. */
  readonly purpose: string;
  /** Milliseconds after the run started. */
  readonly startedAtMs: number;
  readonly latencyMs: number;
  /** The compiled request: messages as sent, tool names, response format. */
  readonly request: {
    readonly messages: readonly Message[];
    readonly tools: readonly string[];
    readonly responseFormat?: ModelRequest['responseFormat'];
    /**
     * The images and files the messages carry, by message (its index in `messages`), without
     * their bytes; absent when there are none. The messages hold them whole, as sent.
     */
    readonly attachments?: readonly ModelCallAttachment[];
  };
  /** Undefined when the call failed. */
  readonly response?: ModelResponse;
  readonly error?: string;
  readonly usage: Usage;
  /** What its usage cost in US dollars, when the chain has `prices` (SPEC H3). */
  readonly cost?: number;
  /** A durable run's call answered from its journal on resume: not made again. */
  readonly replayed?: true;
  /** Made again on resume: it was in flight when the process died, so it may have been made twice. */
  readonly possiblyRepeated?: true;
}

/** An attachment a model call sent, and the message that carried it. */
export interface ModelCallAttachment extends AttachmentSummary {
  /** Index in the request's messages. */
  readonly message: number;
}

export interface ToolCallDetail {
  readonly index: number;
  readonly call: ToolCall;
  readonly result: ToolResult;
  /** The images and files the result carries, without their bytes; absent when none. */
  readonly attachments?: readonly AttachmentSummary[];
  /** `local`, or the name of the remote executor that ran it. */
  readonly executor: string;
  readonly startedAtMs: number;
  readonly latencyMs: number;
  /** A durable run's call answered from its journal on resume: the tool did not run again. */
  readonly replayed?: true;
  /**
   * Issued again on resume: it was running when the process died, so it may have run twice
   * (with the same idempotency key both times).
   */
  readonly possiblyRepeated?: true;
  /** What `beforeToolCall` did: cancelled the call (its reason), or replaced its arguments. */
  readonly hook?: HookedCall;
  /** The decision the call waited for (SPEC H2), and how long it waited. */
  readonly approval?: ApprovedCall;
  /**
   * It finished after its step was cut short (the time limit, an abort, the run failing):
   * the run had moved on, so its result was dropped, and the transcript answers the call as
   * not run. The tool did run: what it did is done.
   */
  readonly discarded?: true;
}

/** One finished tool call, as the executors report it to the recorder. */
export interface ToolCallDone {
  readonly call: ToolCall;
  readonly result: ToolResult;
  /** `local`, or the name of the remote executor that ran it. */
  readonly executor: string;
  /** `performance.now()` times. */
  readonly startedAt: number;
  readonly endedAt: number;
  /** A durable run's call answered from its journal, or issued again on resume. */
  readonly resumed?: ResumedCall | undefined;
  /** What `beforeToolCall` did to it (cancelled it, replaced its arguments). */
  readonly hooked?: HookedCall | undefined;
  /** The decision it waited for (SPEC H2). */
  readonly approval?: ApprovedCall | undefined;
  /** It finished after its step was cut short (see ToolCallDetail). */
  readonly discarded?: boolean;
}

/** A decision on a call that needed approval, as details() shows it. */
export interface ApprovedCall {
  readonly approved: boolean;
  readonly reason?: string;
  /** No one decided within its approvalTimeoutMs. */
  readonly timedOut?: true;
  readonly waitedMs: number;
}

/** How a durable run's resume came by a call (see ModelCallDetail, ToolCallDetail). */
export interface ResumedCall {
  readonly replayed?: true;
  readonly possiblyRepeated?: true;
}

export interface RunDetails {
  readonly modelCalls: readonly ModelCallDetail[];
  readonly toolCalls: readonly ToolCallDetail[];
  /** Summed over the model calls that answered. */
  readonly usage: Usage;
  /** What that usage cost in US dollars, when the chain has `prices` (SPEC H3). */
  readonly cost?: number;
  readonly durationMs: number;
}

export interface ModelCallRecording {
  answered(response: ModelResponse): void;
  failed(error: unknown): void;
}

/** Collects a run's details as its effects happen; one per run. */
export class RunRecorder {
  readonly #start = performance.now();
  #end: number | undefined;
  // Each call keeps its request as sent: the Transcript shares its messages with the run's
  // and the tool list is the run's own array, so recording a call is O(1) in the run's size
  // and costs a few small objects; arrays are built only when details() asks.
  readonly #modelCalls: (Omit<ModelCallDetail, 'request'> & { readonly request: ModelRequest })[] =
    [];
  readonly #toolCalls: ToolCallDetail[] = [];
  /** Model calls started and not yet ended, so indexes follow the order calls start in. */
  #pending = 0;
  /** The run's observers (SPEC X4), told of each call as it is recorded; none: no cost. */
  readonly observation: RunObservation | undefined;
  /** The model's prices, when the run has them: each call's cost is recorded (SPEC H3). */
  readonly #price: ModelPrice | undefined;

  constructor(observation?: RunObservation, price?: ModelPrice) {
    this.observation = observation;
    this.#price = price;
  }

  /** What `usage` cost in US dollars; undefined without prices. */
  costOf(usage: Usage): number | undefined {
    return this.#price ? costOf(usage, this.#price) : undefined;
  }

  /**
   * Times one model call and records it, whether it answers or fails. `streamed`: the call
   * is made with `model.stream` rather than `model.generate` (observers report which).
   */
  async modelCall(
    purpose: string,
    request: ModelRequest,
    streamed: boolean,
    call: () => Promise<ModelResponse>,
    resumed?: ResumedCall,
  ): Promise<ModelResponse> {
    const recording = this.startModelCall(purpose, request, streamed, resumed);
    try {
      const response = await call();
      recording.answered(response);
      return response;
    } catch (error) {
      recording.failed(error);
      throw error;
    }
  }

  /** For calls whose answer is not a ModelResponse as such (a plan read from a stream). */
  startModelCall(
    purpose: string,
    request: ModelRequest,
    streamed: boolean,
    resumed?: ResumedCall,
  ): ModelCallRecording {
    const started = performance.now();
    const detail = {
      index: this.#modelCalls.length + this.#pending + 1,
      purpose,
      startedAtMs: round(started - this.#start),
      request,
      ...resumed,
    };
    this.#pending++;
    const { observation } = this;
    const observed = observation?.modelCallStart(detail.index, purpose, request, streamed, started);
    const end = (rest: Pick<ModelCallDetail, 'response' | 'error' | 'usage' | 'cost'>) => {
      this.#pending--;
      const ended = performance.now();
      this.#modelCalls.push({ ...detail, latencyMs: round(ended - started), ...rest });
      return ended;
    };
    return {
      answered: (response) => {
        const cost = this.costOf(response.usage);
        const ended = end({ response, usage: response.usage, ...(cost !== undefined && { cost }) });
        if (observed) observation?.modelCallAnswered(observed, response, ended, cost);
      },
      failed: (error) => {
        const ended = end({
          error: error instanceof Error ? error.message : String(error),
          usage: ZERO_USAGE,
        });
        if (observed) observation?.modelCallFailed(observed, error, ended);
      },
    };
  }

  /**
   * A durable run's model call answered from its journal on resume: recorded with the
   * latency it had, observers not told (they saw it in the process that made it).
   */
  replayedModelCall(
    purpose: string,
    request: ModelRequest,
    response: ModelResponse,
    latencyMs = 0,
  ): void {
    this.#modelCalls.push({
      index: this.#modelCalls.length + this.#pending + 1,
      purpose,
      startedAtMs: round(performance.now() - this.#start),
      request,
      latencyMs,
      response,
      usage: response.usage,
      ...this.#costField(response.usage),
      replayed: true,
    });
  }

  /** A call waits for a decision (SPEC H2): only observers hear of it; details() shows the decision. */
  approvalRequested(request: ApprovalRequest): void {
    this.observation?.approval({ type: 'requested', request, time: observedTime() });
  }

  approvalDecided(decision: ApprovalDecision, waitedMs: number): void {
    this.observation?.approval({ type: 'decided', decision, waitedMs, time: observedTime() });
  }

  /** A tool call starting (`performance.now()` time): only observers hear of it. */
  toolCallStarted(call: ToolCall, executor: string, startedAt: number): void {
    this.observation?.toolCallStart(call, executor, startedAt);
  }

  toolCall(done: ToolCallDone): void {
    const { call, result, executor, startedAt, endedAt, resumed, hooked, approval } = done;
    this.#toolCalls.push({
      index: this.#toolCalls.length + 1,
      call,
      result,
      executor,
      ...(result.attachments?.length && {
        attachments: result.attachments.map(summarizeAttachment),
      }),
      startedAtMs: round(startedAt - this.#start),
      latencyMs: round(endedAt - startedAt),
      ...resumed,
      ...(hooked && { hook: hooked }),
      ...(approval && { approval }),
      ...(done.discarded && { discarded: true as const }),
    });
    // A replayed call was observed in the process that ran it.
    if (!resumed?.replayed)
      this.observation?.toolCallEnd(call, result, executor, startedAt, endedAt);
  }

  /** Marks the run's end: later calls of details() report the same duration. */
  finish(): void {
    this.#end ??= performance.now();
  }

  details(): RunDetails {
    const modelCalls = [...this.#modelCalls]
      .sort((a, b) => a.index - b.index)
      .map(({ request, ...call }) => {
        const messages = request.messages.toArray();
        const attachments = messages.flatMap((message, index) =>
          attachmentsOf(message).map((attachment) => ({
            message: index,
            ...summarizeAttachment(attachment),
          })),
        );
        return {
          ...call,
          request: {
            messages,
            tools: (request.tools ?? []).map((tool) => tool.name),
            ...(request.responseFormat && { responseFormat: request.responseFormat }),
            ...(attachments.length > 0 && { attachments }),
          },
        };
      });
    const usage = modelCalls.reduce((sum, call) => addUsage(sum, call.usage), ZERO_USAGE);
    return {
      modelCalls,
      toolCalls: [...this.#toolCalls].sort((a, b) => a.startedAtMs - b.startedAtMs),
      usage,
      ...this.#costField(usage),
      durationMs: round((this.#end ?? performance.now()) - this.#start),
    };
  }

  #costField(usage: Usage): { cost?: number } {
    const cost = this.costOf(usage);
    return cost === undefined ? {} : { cost };
  }
}

/**
 * `result` with a `details()` method that is not enumerable: results stay plain data for
 * `toEqual`, JSON and spreading, and the details are one call away.
 */
export function withDetails<R extends object>(
  result: R,
  recorder: RunRecorder,
): R & { details(): RunDetails } {
  return Object.defineProperty(result, 'details', {
    value: () => recorder.details(),
    enumerable: false,
  }) as R & { details(): RunDetails };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * The details as text for a terminal: one line per model call and tool call, in the order
 * they started, then the totals.
 */
export function formatRunDetails(details: RunDetails): string {
  const events = [
    ...details.modelCalls.map((call) => ({ at: call.startedAtMs, text: modelLine(call) })),
    ...details.toolCalls.map((tool) => ({ at: tool.startedAtMs, text: toolLine(tool) })),
  ].sort((a, b) => a.at - b.at);
  const { usage } = details;
  const totals =
    `${details.modelCalls.length} model call(s), ${details.toolCalls.length} tool call(s), ` +
    `${usage.totalTokens} tokens (${usage.inputTokens} in, ${usage.outputTokens} out), ` +
    `${details.cost === undefined ? '' : `$${Number(details.cost.toPrecision(4))}, `}${details.durationMs} ms`;
  return [...events.map((event) => event.text), totals].join('\n');
}

function modelLine(call: ModelCallDetail): string {
  const sent = call.request.attachments ?? [];
  const head = `[${ms(call.startedAtMs)}] model #${call.index} ${call.purpose}: ${call.request.messages.length} message(s)${sent.length ? ` with ${attachmentsLine(sent)}` : ''}`;
  if (!call.response) return `${head} → failed after ${call.latencyMs} ms: ${call.error}`;
  const { usage, finishReason, content } = call.response;
  const parts = content.map((part) =>
    part.type === 'text'
      ? `text ${JSON.stringify(clip(part.text))}`
      : `call ${part.toolCall.name}(${clip(JSON.stringify(part.toolCall.arguments) ?? '')})`,
  );
  return `${head} → ${finishReason.unified} in ${call.latencyMs} ms, ${usage.inputTokens}+${usage.outputTokens} tokens${parts.length ? `\n    ${parts.join('\n    ')}` : ''}`;
}

function toolLine(tool: ToolCallDetail): string {
  const { call, result } = tool;
  const outcome = result.success
    ? `✓ ${clip(JSON.stringify(result.output) ?? 'undefined')}`
    : `✗ ${clip(result.error ?? 'failed')}`;
  const dropped = tool.discarded ? ' (finished after its step was cut short: dropped)' : '';
  const attached = tool.attachments ? ` + ${attachmentsLine(tool.attachments)}` : '';
  return `[${ms(tool.startedAtMs)}] tool ${call.name}(${clip(JSON.stringify(call.arguments) ?? '')}) on ${tool.executor}, ${tool.latencyMs} ms ${outcome}${attached}${dropped}`;
}

/** `2 attachments (image/png screen.png 3.0 KB, application/pdf 812 B)`: never the bytes. */
function attachmentsLine(attachments: readonly AttachmentSummary[]): string {
  const each = attachments.map((a) =>
    [a.mediaType, a.name, a.url ? clip(a.url, 40) : sizeText(a.size)].filter(Boolean).join(' '),
  );
  return `${attachments.length} attachment(s) (${each.join(', ')})`;
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function ms(value: number): string {
  return `${value.toFixed(1).padStart(7)} ms`;
}

function clip(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
