import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { attachmentTotals } from '../attachment-summary.js';
import { ConfigError } from '../errors.js';
import { isAsyncIterable } from '../host/async-iterable.js';
import type { Message } from '../messages.js';
import type { ModelRequest, ModelResponse } from '../model/language-model.js';
import type {
  ObservedModelCall,
  ObservedRun,
  ObservedToolCall,
  RunObserver,
} from '../observe/run-observer.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { flag, satisfies } from '../options/kinds.js';
import type { Usage } from '../usage.js';
import { ATTR, errorMessage, errorType, finishReason, providerName } from './gen-ai-attributes.js';
import {
  contentText,
  inputMessages,
  outputMessages,
  runInputMessages,
  runOutputMessages,
} from './gen-ai-messages.js';
import { type RunRole, runRole } from './run-roles.js';

// Runs as OpenTelemetry spans (SPEC X4); which span each kind of run becomes is in
// run-roles.ts. Two rules keep users' data out of traces unless `captureContent` is on:
// messages, tool arguments and results are opt-in attributes, and an error's status message
// is its `error.type` (a code or class name), since error messages quote what the model said
// (a malformed plan is shown back to it) or what a tool was given. Usage is recorded only for
// runs that called a model: a tool loop planned by a function spent no tokens, not zero.

export interface OtelObserverOptions {
  /** Where spans go; default `trace.getTracer('statecraft')` from the global provider. */
  readonly tracer?: Tracer;
  /**
   * Record message content, tool arguments and tool results on spans (the conventions'
   * opt-in `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`), and errors' messages as span status messages (otherwise the
   * status message is the error's code or class name). Off by default: it is your users' data.
   */
  readonly captureContent?: boolean;
}

/** A run whose span is open, and what later events need to know of it. */
interface OpenRun {
  readonly run: ObservedRun;
  readonly span: Span;
  /** A `group` becomes a `workflow` when an agent starts beneath it. */
  role: RunRole | 'workflow';
  /** Model calls reported for this run: none means no usage to record. */
  modelCalls: number;
  /** The run's input, kept (with captureContent) until it turns out to be a workflow. */
  readonly input?: unknown;
}

/** A model call's span; a model run's own span when the run is the call (`owned` false). */
interface OpenCall {
  readonly span: Span;
  readonly owned: boolean;
}

/**
 * A run observer that records runs as OpenTelemetry spans in the GenAI semantic conventions
 * (SPEC X4): `invoke_agent {name}` for chains and tool loops, `invoke_workflow {name}` for
 * sequences and parallels that run agents, `chat {model}` for each model call (and for a model
 * run as a step) and `execute_tool {tool}` for each tool call, each under the run it belongs
 * to, and child runs under their parent's span. Spans carry the observed start and end times;
 * chat spans say whether the call streamed (`gen_ai.request.stream`), and agent, workflow and
 * chat spans of a run given a `sessionId` name it as `gen_ai.conversation.id`.
 * Told of an event twice (the same observer registered twice), it records it once.
 */
export function otelObserver(options: OtelObserverOptions = {}): RunObserver {
  const { tracer, captureContent } = checkedOptions(options);
  const runs = new Map<string, OpenRun>();
  const modelCalls = new WeakMap<ObservedModelCall, OpenCall>();
  const toolSpans = new WeakMap<ObservedToolCall, Span>();
  /** Calls waiting for a decision (SPEC H2), by run and call id: `await_approval {tool}`. */
  const approvalSpans = new Map<string, { readonly runId: string; readonly span: Span }>();

  /** The context a span of `run` starts in: its parent run's span, else whatever is active. */
  const parentContext = (parentRunId: string | undefined): Context => {
    const parent = parentRunId === undefined ? undefined : runs.get(parentRunId);
    return parent ? trace.setSpan(context.active(), parent.span) : context.active();
  };
  const runContext = (run: ObservedRun): Context => {
    const open = runs.get(run.runId);
    return open ? trace.setSpan(context.active(), open.span) : parentContext(run.parentRunId);
  };

  /** An agent started: every sequence or parallel above it is a workflow. */
  const markWorkflows = (parentRunId: string | undefined): void => {
    for (let id = parentRunId; id !== undefined; ) {
      const open = runs.get(id);
      if (!open) return;
      if (open.role === 'group') {
        open.role = 'workflow';
        open.span.updateName(`invoke_workflow ${open.run.name}`);
        open.span.setAttribute(ATTR.operationName, 'invoke_workflow');
        open.span.setAttribute(ATTR.workflowName, open.run.name);
        if (open.run.sessionId !== undefined) {
          open.span.setAttribute(ATTR.conversationId, open.run.sessionId);
        }
        const messages = captureContent ? runInputMessages(open.input) : undefined;
        if (messages !== undefined) open.span.setAttribute(ATTR.inputMessages, messages);
      }
      id = open.run.parentRunId;
    }
  };

  return {
    onRunStart(run, input) {
      if (runs.has(run.runId)) return;
      const role = runRole(run);
      const attributes: Attributes = { [ATTR.runId]: run.runId, [ATTR.runKind]: run.kind };
      let name = `${run.kind} ${run.name}`;
      if (run.model && (role === 'agent' || role === 'model')) {
        attributes[ATTR.providerName] = providerName(run.model.provider);
        attributes[ATTR.requestModel] = run.model.modelId;
        if (run.sessionId !== undefined) attributes[ATTR.conversationId] = run.sessionId;
      }
      if (role === 'agent') {
        name = `invoke_agent ${run.name}`;
        attributes[ATTR.operationName] = 'invoke_agent';
        attributes[ATTR.agentName] = run.name;
        const messages = captureContent ? runInputMessages(input) : undefined;
        if (messages !== undefined) attributes[ATTR.inputMessages] = messages;
        Object.assign(attributes, attachmentAttributes(inputMessageList(input)));
      } else if (role === 'model' && run.model) {
        name = `chat ${run.model.modelId}`;
        attributes[ATTR.operationName] = 'chat';
      }
      const span = tracer.startSpan(
        name,
        {
          kind: role === 'model' ? SpanKind.CLIENT : SpanKind.INTERNAL,
          startTime: run.startTime,
          attributes,
        },
        parentContext(run.parentRunId),
      );
      runs.set(run.runId, {
        run,
        span,
        role,
        modelCalls: 0,
        ...(captureContent && role === 'group' && { input }),
      });
      if (role === 'agent') markWorkflows(run.parentRunId);
    },

    onRunEnd(run, outcome) {
      // A wait the run's end cut short (a parked run, an abort) ends with it, undecided.
      for (const [key, waiting] of approvalSpans) {
        if (waiting.runId !== run.runId) continue;
        approvalSpans.delete(key);
        waiting.span.end(outcome.endTime);
      }
      const open = runs.get(run.runId);
      if (!open) return;
      runs.delete(run.runId);
      const { span, role } = open;
      if ('error' in outcome) fail(span, outcome.error, captureContent);
      else if (role === 'model' && open.modelCalls === 0 && isModelResponse(outcome.output)) {
        // A model run that reported no call of its own: its output is the call's response.
        recordResponse(span, outcome.output, outcome.output.usage, captureContent);
      } else if (captureContent && (role === 'agent' || role === 'workflow')) {
        const messages = runOutputMessages(outcome.output);
        if (messages !== undefined) span.setAttribute(ATTR.outputMessages, messages);
      }
      // A model run's usage is its call's, recorded with the response.
      if (role !== 'model' && outcome.usage && spentTokens(open, outcome.usage)) {
        setUsage(span, outcome.usage);
        if (outcome.cost !== undefined) span.setAttribute(ATTR.costUsd, outcome.cost);
      }
      span.end(outcome.endTime);
    },

    onModelCallStart(run, call) {
      if (modelCalls.has(call)) return;
      const open = runs.get(run.runId);
      if (open) open.modelCalls += 1;
      const attributes: Attributes = {
        [ATTR.modelCallPurpose]: call.purpose,
        [ATTR.requestStream]: call.streamed,
        ...requestAttributes(call.request),
        ...attachmentAttributes(call.request.messages),
      };
      if (run.sessionId !== undefined) attributes[ATTR.conversationId] = run.sessionId;
      if (captureContent)
        attributes[ATTR.inputMessages] = inputMessages(call.request.messages.toArray());
      if (open?.role === 'model') {
        // The run is the call: its span gets the request, and later the response.
        open.span.setAttributes(attributes);
        modelCalls.set(call, { span: open.span, owned: false });
        return;
      }
      const { provider, modelId } = call.model;
      const span = tracer.startSpan(
        `chat ${modelId}`,
        {
          kind: SpanKind.CLIENT,
          startTime: call.startTime,
          attributes: {
            [ATTR.operationName]: 'chat',
            [ATTR.providerName]: providerName(provider),
            [ATTR.requestModel]: modelId,
            ...attributes,
          },
        },
        runContext(run),
      );
      modelCalls.set(call, { span, owned: true });
    },

    onModelCallEnd(_run, call, outcome) {
      const open = modelCalls.get(call);
      if (!open) return;
      modelCalls.delete(call);
      if ('error' in outcome) fail(open.span, outcome.error, captureContent);
      else {
        recordResponse(open.span, outcome.response, outcome.usage, captureContent);
        if (outcome.cost !== undefined) open.span.setAttribute(ATTR.costUsd, outcome.cost);
      }
      if (open.owned) open.span.end(outcome.endTime);
    },

    onApproval(run, approval) {
      if (approval.type === 'requested') {
        const { request } = approval;
        const key = `${run.runId}\u0000${request.callId}`;
        if (approvalSpans.has(key)) return;
        const attributes: Attributes = {
          [ATTR.toolName]: request.tool,
          [ATTR.toolCallId]: request.callId,
        };
        if (captureContent) attributes[ATTR.toolCallArguments] = contentText(request.arguments);
        const span = tracer.startSpan(
          `await_approval ${request.tool}`,
          { kind: SpanKind.INTERNAL, startTime: approval.time, attributes },
          runContext(run),
        );
        approvalSpans.set(key, { runId: run.runId, span });
        return;
      }
      const { decision } = approval;
      const key = `${run.runId}\u0000${decision.callId}`;
      const waiting = approvalSpans.get(key);
      if (!waiting) return;
      approvalSpans.delete(key);
      waiting.span.setAttribute(ATTR.approvalApproved, decision.approved);
      if (decision.timedOut) waiting.span.setAttribute(ATTR.approvalTimedOut, true);
      if (captureContent && decision.reason !== undefined) {
        waiting.span.setAttribute(ATTR.approvalReason, decision.reason);
      }
      waiting.span.end(approval.time);
    },

    onToolCallStart(run, observed) {
      if (toolSpans.has(observed)) return;
      const { call } = observed;
      const attributes: Attributes = {
        [ATTR.operationName]: 'execute_tool',
        [ATTR.toolName]: call.name,
        [ATTR.toolCallId]: call.id,
        [ATTR.toolType]: 'function',
        [ATTR.toolExecutor]: observed.executor,
      };
      if (captureContent) attributes[ATTR.toolCallArguments] = contentText(call.arguments);
      const span = tracer.startSpan(
        `execute_tool ${call.name}`,
        { kind: SpanKind.INTERNAL, startTime: observed.startTime, attributes },
        runContext(run),
      );
      toolSpans.set(observed, span);
    },

    onToolCallEnd(_run, observed, outcome) {
      const span = toolSpans.get(observed);
      if (!span) return;
      toolSpans.delete(observed);
      const { result } = outcome;
      if (result.attachments?.length) {
        span.setAttributes(attachmentAttributes([{ role: 'tool', ...result }]));
      }
      // Cancelled by its run's end (aborted, timed out): the cancellation's own error type
      // (`ABORTED`), so a trace tells a tool that was cut short from one that failed.
      if (outcome.error !== undefined) fail(span, outcome.error, captureContent);
      // A failed tool is data the model reads, not an exception; for the trace it is an error.
      else if (!result.success) {
        span.setAttribute(ATTR.errorType, 'tool_error');
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: captureContent ? (result.error ?? 'the tool failed') : 'tool_error',
        });
      } else if (captureContent && !isAsyncIterable(result.output)) {
        // A streaming tool's output is read later, in batches: at its end there is no result
        // to record, and its iterator serialized as `{}` would be a wrong one.
        span.setAttribute(ATTR.toolCallResult, contentText(result.output));
      }
      span.end(outcome.endTime);
    },
  };
}

/** `statecraft.attachments.count` and `….bytes` of what `messages` carry; {} when none. */
function attachmentAttributes(messages: Iterable<Message>): Attributes {
  const { count, bytes } = attachmentTotals(messages);
  return count === 0 ? {} : { [ATTR.attachmentsCount]: count, [ATTR.attachmentsBytes]: bytes };
}

/** A run's input messages when it has them (a chain's `{ messages }`), else none. */
function inputMessageList(input: unknown): Message[] {
  const messages = (input as { messages?: unknown } | null | undefined)?.messages;
  return Array.isArray(messages) ? (messages as Message[]) : [];
}

/** A model call's answer on its span: response metadata, finish reason, usage, content. */
function recordResponse(
  span: Span,
  response: ModelResponse,
  usage: Usage,
  captureContent: boolean,
): void {
  if (response.response?.modelId) span.setAttribute(ATTR.responseModel, response.response.modelId);
  if (response.response?.id) span.setAttribute(ATTR.responseId, response.response.id);
  span.setAttribute(ATTR.responseFinishReasons, [finishReason(response.finishReason)]);
  setUsage(span, usage);
  if (captureContent) span.setAttribute(ATTR.outputMessages, outputMessages(response));
}

/**
 * Whether a run's usage says anything: it called a model, or runs it started on its behalf
 * did (a loop's chain responder). A run with neither spent no tokens rather than zero.
 */
function spentTokens(open: OpenRun, usage: Usage): boolean {
  return open.modelCalls > 0 || usage.inputTokens > 0 || usage.outputTokens > 0;
}

function isModelResponse(value: unknown): value is ModelResponse {
  if (typeof value !== 'object' || value === null) return false;
  const { content, usage, finishReason } = value as Partial<ModelResponse>;
  return Array.isArray(content) && typeof usage === 'object' && typeof finishReason === 'object';
}

function requestAttributes(request: ModelRequest): Attributes {
  const attributes: Attributes = {};
  if (request.temperature !== undefined) attributes[ATTR.requestTemperature] = request.temperature;
  if (request.topP !== undefined) attributes[ATTR.requestTopP] = request.topP;
  if (request.maxOutputTokens !== undefined)
    attributes[ATTR.requestMaxTokens] = request.maxOutputTokens;
  if (request.stopSequences?.length)
    attributes[ATTR.requestStopSequences] = [...request.stopSequences];
  if (request.seed !== undefined) attributes[ATTR.requestSeed] = request.seed;
  const format = request.responseFormat?.type;
  if (format) attributes[ATTR.outputType] = format === 'text' ? 'text' : 'json';
  return attributes;
}

function setUsage(span: Span, usage: Usage): void {
  span.setAttribute(ATTR.usageInputTokens, usage.inputTokens);
  span.setAttribute(ATTR.usageOutputTokens, usage.outputTokens);
  if (usage.cachedInputTokens !== undefined) {
    span.setAttribute(ATTR.usageCacheReadInputTokens, usage.cachedInputTokens);
  }
  if (usage.reasoningTokens !== undefined) {
    span.setAttribute(ATTR.usageReasoningOutputTokens, usage.reasoningTokens);
  }
}

/**
 * Marks a span failed. The status message is the error's message only with captureContent:
 * messages quote model output and tool input. Otherwise it is the `error.type`.
 */
function fail(span: Span, error: unknown, captureContent: boolean): void {
  const type = errorType(error);
  span.setAttribute(ATTR.errorType, type);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: captureContent ? errorMessage(error) : type,
  });
}

/**
 * otelObserver's (and instrument's) options described once (see src/options/describe.ts):
 * their checks, in the order problems are reported, and their defaults. The tracer's default
 * is read from the global provider when the observer is made, so it is text here.
 */
export const OTEL_OPTIONS = describeOptions('otelObserver', {
  tracer: satisfies<Tracer>(
    (tracer) => typeof (tracer as { startSpan?: unknown } | null)?.startSpan === 'function',
    'must be an OpenTelemetry Tracer (with startSpan)',
    { defaultText: "trace.getTracer('statecraft')" },
  ),
  captureContent: flag({ default: false }, (value) => `must be true or false; got ${typeof value}`),
});

// tsc fails here, naming the option, when OtelObserverOptions and its description drift apart.
const _described: Describes<OtelObserverOptions, typeof OTEL_OPTIONS> = true;

function checkedOptions(options: OtelObserverOptions): Required<OtelObserverOptions> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'must be an object: { tracer?, captureContent? }');
  }
  const { tracer, captureContent } = OTEL_OPTIONS.parse(options);
  return { tracer: tracer ?? trace.getTracer('statecraft'), captureContent };
}
