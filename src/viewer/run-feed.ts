import type { AnyStateMachine } from 'xstate';
import { summarizeAttachment } from '../attachment-summary.js';
import { type Attachment, attachmentUrl, isImage } from '../attachments.js';
import type { ObservedRun, ObservedToolCall, RunObserver } from '../observe/run-observer.js';
import { activeNodeIds, diagramsOf, type MachineDiagrams } from './machine-diagram.js';
import type { ViewerAttachment, ViewerEvent } from './viewer-events.js';

// The viewer's memory of what runs did (SPEC X4): a RunObserver turns each hook into a small
// ViewerEvent, numbers it, keeps it, and passes it to whoever listens (the open pages). A
// page that connects late is sent the kept events first, so it shows runs that started, or
// ended, before it was opened; a page that reconnects asks only for what it missed.

export interface SequencedEvent {
  /** 1, 2, 3, … in the order the hooks fired: the Server-Sent Event id. */
  readonly seq: number;
  readonly event: ViewerEvent;
}

export interface RunFeedOptions {
  /**
   * Finished top-level runs (each with the runs nested in it) kept for pages that connect
   * later; older ones are forgotten first. Default 100.
   */
  readonly keepRuns?: number;
}

/** Finished top-level runs a feed keeps when not told. */
export const DEFAULT_KEEP_RUNS = 100;

/** `keepRuns`, an integer >= 1; a RangeError otherwise. */
export function checkKeepRuns(keepRuns: unknown): number {
  if (typeof keepRuns !== 'number' || !Number.isInteger(keepRuns) || keepRuns < 1) {
    throw new RangeError(`keepRuns must be a positive integer, got ${String(keepRuns)}`);
  }
  return keepRuns;
}

/** How much of a tool's arguments and output the page gets to show. */
const PREVIEW_LENGTH = 160;

/**
 * The largest inline image sent to the page as a thumbnail: a screenshot or a chart, not a
 * photo at full resolution, so a page kept open over many runs stays light.
 */
export const THUMBNAIL_BYTES = 256 * 1024;

export class RunFeed {
  readonly #keepRuns: number;
  #seq = 0;
  #log: SequencedEvent[] = [];
  readonly #listeners = new Set<(event: SequencedEvent) => void>();
  /**
   * The ids of the diagrams still kept, by their text: every createChain makes a machine of
   * its own, and a thousand chains draw one diagram, sent once.
   */
  readonly #diagramIds = new Map<string, string>();
  #diagramCount = 0;
  /** The top-level run of every run the feed still keeps. */
  readonly #rootOf = new Map<string, string>();
  /** Top-level runs that ended, oldest first: the ones forgotten when there are too many. */
  readonly #finishedRoots: string[] = [];
  readonly #toolKeys = new WeakMap<ObservedToolCall, number>();
  readonly #toolCounts = new Map<string, number>();

  constructor(options: RunFeedOptions = {}) {
    this.#keepRuns = checkKeepRuns(options.keepRuns ?? DEFAULT_KEEP_RUNS);
  }

  /** The number of the latest event (0 before any): a page cannot have seen more. */
  get lastSeq(): number {
    return this.#seq;
  }

  /** The kept events numbered above `afterSeq` (all of them by default), in order. */
  history(afterSeq = 0): readonly SequencedEvent[] {
    return this.#log.filter((entry) => entry.seq > afterSeq);
  }

  /** Calls `listener` with every event from now on; returns the unsubscribe function. */
  subscribe(listener: (event: SequencedEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The hooks that feed this viewer: register them with `observeRuns` or a run's `observers`. */
  readonly observer: RunObserver = {
    onRunStart: (run, input) => {
      this.#start(run, inputAttachments(input));
    },
    onState: (run, state) => {
      this.#start(run);
      const value = typeof state === 'string' ? state : JSON.stringify(state);
      this.#push({
        type: 'state',
        runId: run.runId,
        time: now(),
        value,
        nodeIds: run.machine ? activeNodeIds(state) : [],
      });
    },
    onModelCallStart: (run, call) => {
      this.#start(run);
      this.#push({
        type: 'model-call-start',
        runId: run.runId,
        index: call.index,
        purpose: call.purpose,
        model: { provider: call.model.provider, modelId: call.model.modelId },
        startTime: call.startTime,
      });
    },
    onModelCallEnd: (run, call, outcome) => {
      this.#start(run);
      this.#push({
        type: 'model-call-end',
        runId: run.runId,
        index: call.index,
        endTime: outcome.endTime,
        ...('error' in outcome
          ? { error: messageOf(outcome.error) }
          : { usage: outcome.usage, finishReason: outcome.response.finishReason.unified }),
      });
    },
    onToolCallStart: (run, call) => {
      this.#start(run);
      const key = (this.#toolCounts.get(run.runId) ?? 0) + 1;
      this.#toolCounts.set(run.runId, key);
      this.#toolKeys.set(call, key);
      this.#push({
        type: 'tool-call-start',
        runId: run.runId,
        key,
        name: call.call.name,
        executor: call.executor,
        arguments: preview(call.call.arguments),
        startTime: call.startTime,
      });
    },
    onToolCallEnd: (run, call, outcome) => {
      const key = this.#toolKeys.get(call);
      if (key === undefined) return; // its start was not seen: nothing to end on the page
      const { result } = outcome;
      this.#push({
        type: 'tool-call-end',
        runId: run.runId,
        key,
        endTime: outcome.endTime,
        ok: result.success,
        preview: result.success ? preview(result.output) : cut(result.error ?? 'failed'),
        ...(result.attachments?.length && {
          attachments: result.attachments.map(viewerAttachment),
        }),
      });
    },
    onRunEnd: (run, outcome) => {
      this.#start(run);
      this.#toolCounts.delete(run.runId);
      this.#push({
        type: 'run-end',
        runId: run.runId,
        endTime: outcome.endTime,
        ...('error' in outcome
          ? { status: 'failed' as const, error: messageOf(outcome.error) }
          : { status: 'succeeded' as const }),
        ...(outcome.usage && { usage: outcome.usage }),
      });
      if (this.#rootOf.get(run.runId) === run.runId) this.#finishRoot(run.runId);
    },
  };

  /** Announces a run the first time any hook mentions it (an observer may join mid-run). */
  #start(run: ObservedRun, attachments: readonly ViewerAttachment[] = []): void {
    if (this.#rootOf.has(run.runId)) return;
    const parentRoot =
      run.parentRunId === undefined ? undefined : this.#rootOf.get(run.parentRunId);
    this.#rootOf.set(run.runId, parentRoot ?? run.runId);
    const diagramId = run.machine ? this.#diagram(run.machine) : undefined;
    this.#push({
      type: 'run-start',
      runId: run.runId,
      parentRunId: run.parentRunId,
      name: run.name,
      kind: run.kind,
      startTime: run.startTime,
      ...(diagramId && { diagramId }),
      ...(run.model && { model: { provider: run.model.provider, modelId: run.model.modelId } }),
      ...(attachments.length > 0 && { attachments }),
    });
  }

  /** The id of the machine's diagram, sent the first time a run that draws it starts. */
  #diagram(machine: AnyStateMachine): string | undefined {
    let diagrams: MachineDiagrams;
    try {
      diagrams = diagramsOf(machine); // made once per machine
    } catch {
      return undefined; // a machine the export cannot draw: the run is shown without it
    }
    const text = `${diagrams.labelled}\n${diagrams.plain}`;
    const known = this.#diagramIds.get(text);
    if (known) return known;
    const diagramId = `d${++this.#diagramCount}`;
    this.#diagramIds.set(text, diagramId);
    this.#push({ type: 'diagram', diagramId, ...diagrams });
    return diagramId;
  }

  #push(event: ViewerEvent): void {
    const entry = { seq: ++this.#seq, event };
    this.#log.push(entry);
    for (const listener of this.#listeners) listener(entry);
  }

  /** Forgets the oldest finished top-level runs beyond `keepRuns`, with every run inside them. */
  #finishRoot(rootId: string): void {
    this.#finishedRoots.push(rootId);
    if (this.#finishedRoots.length <= this.#keepRuns) return;
    const dropped = new Set(
      this.#finishedRoots.splice(0, this.#finishedRoots.length - this.#keepRuns),
    );
    const forgotten = new Set<string>();
    for (const [runId, root] of this.#rootOf) {
      if (dropped.has(root)) forgotten.add(runId);
    }
    for (const runId of forgotten) this.#rootOf.delete(runId);
    const log = this.#log.filter(
      ({ event }) => event.type === 'diagram' || !forgotten.has(event.runId),
    );
    // A diagram stays while a kept run draws it; one no kept run draws is forgotten too, and
    // sent again (with a new id) if a run that draws it comes later.
    const drawn = new Set(
      log.flatMap(({ event }) => (event.type === 'run-start' ? [event.diagramId] : [])),
    );
    this.#log = log.filter(({ event }) => event.type !== 'diagram' || drawn.has(event.diagramId));
    for (const [text, diagramId] of this.#diagramIds) {
      if (!drawn.has(diagramId)) this.#diagramIds.delete(text);
    }
  }
}

/** The attachments of a run input's user messages (a chain's `{ messages }`), for the page. */
function inputAttachments(input: unknown): ViewerAttachment[] {
  const messages = (input as { messages?: unknown } | null | undefined)?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((message: { role?: unknown; attachments?: unknown }) =>
    message?.role === 'user' && Array.isArray(message.attachments)
      ? (message.attachments as Attachment[]).map(viewerAttachment)
      : [],
  );
}

function viewerAttachment(attachment: Attachment): ViewerAttachment {
  const summary = summarizeAttachment(attachment);
  const small = attachment.data !== undefined && summary.size <= THUMBNAIL_BYTES;
  return isImage(attachment) && small
    ? { ...summary, thumbnail: attachmentUrl(attachment) }
    : summary;
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

function messageOf(error: unknown): string {
  return cut(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

function preview(value: unknown): string {
  if (typeof value === 'string') return cut(value);
  try {
    return cut(JSON.stringify(value) ?? String(value));
  } catch {
    return cut(String(value)); // circular or BigInt: still something to show
  }
}

function cut(text: string): string {
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH - 1)}…` : text;
}
