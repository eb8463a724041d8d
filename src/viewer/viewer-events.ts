import type { AttachmentSummary } from '../attachment-summary.js';
import type { RunKind } from '../observe/run-info.js';
import type { Usage } from '../usage.js';

// What the viewer page receives, one Server-Sent Event each (SPEC X4, A5). Plain JSON and
// deliberately small: names, times, token counts and short previews, never a run's whole
// context or transcript, so a page that stays open over thousands of runs stays light and
// the stream shows nothing a terminal log would not. Times are `performance.timeOrigin +
// performance.now()` milliseconds, the clock RunObserver hooks use.

/**
 * An image or file of a run's input or a tool's result as the page shows it: what it is and
 * its size, and for a small inline image a `data:` URL the page draws as a thumbnail. Larger
 * images and every other file are shown by name, type and size: their bytes stay out of the
 * event stream, and a URL attachment is never fetched by the page (it is shown as text).
 */
export interface ViewerAttachment extends AttachmentSummary {
  /** `data:image/…;base64,…` of an inline image up to THUMBNAIL_BYTES. */
  readonly thumbnail?: string;
}

/** A machine's Mermaid diagrams (see machine-diagram.ts), sent once however many runs draw it. */
export interface DiagramEvent {
  readonly type: 'diagram';
  readonly diagramId: string;
  /** States and arrows: what the page shows by default. */
  readonly plain: string;
  /** `toMermaid(machine)`, with every trigger, guard and action. */
  readonly labelled: string;
}

export interface RunStartEvent {
  readonly type: 'run-start';
  readonly runId: string;
  readonly parentRunId: string | undefined;
  readonly name: string;
  readonly kind: RunKind;
  readonly startTime: number;
  /** Chains and tool loops: the diagram their states light up in. */
  readonly diagramId?: string;
  readonly model?: { readonly provider: string; readonly modelId: string };
  /** The images and files of its input's user messages; absent when none. */
  readonly attachments?: readonly ViewerAttachment[];
}

export interface StateEvent {
  readonly type: 'state';
  readonly runId: string;
  readonly time: number;
  /** The state value as the observer reported it (`thinking`, `{"running":"planning"}`). */
  readonly value: string;
  /** The Mermaid node ids of the active states, ancestors first: what the page marks current. */
  readonly nodeIds: readonly string[];
}

export interface ModelCallStartEvent {
  readonly type: 'model-call-start';
  readonly runId: string;
  /** 1-based within the run. */
  readonly index: number;
  readonly purpose: string;
  readonly model: { readonly provider: string; readonly modelId: string };
  readonly startTime: number;
}

export interface ModelCallEndEvent {
  readonly type: 'model-call-end';
  readonly runId: string;
  readonly index: number;
  readonly endTime: number;
  readonly usage?: Usage;
  readonly finishReason?: string;
  /** The error's message when the call failed. */
  readonly error?: string;
}

export interface ToolCallStartEvent {
  readonly type: 'tool-call-start';
  readonly runId: string;
  /** Unique within the run, in start order (tool call ids need not be). */
  readonly key: number;
  readonly name: string;
  readonly executor: string;
  /** The arguments as JSON, cut to a preview. */
  readonly arguments: string;
  readonly startTime: number;
}

export interface ToolCallEndEvent {
  readonly type: 'tool-call-end';
  readonly runId: string;
  readonly key: number;
  readonly endTime: number;
  readonly ok: boolean;
  /** The output as JSON, or the error, cut to a preview. */
  readonly preview: string;
  /** The images and files the result carries; absent when none. */
  readonly attachments?: readonly ViewerAttachment[];
}

export interface RunEndEvent {
  readonly type: 'run-end';
  readonly runId: string;
  readonly endTime: number;
  readonly status: 'succeeded' | 'failed';
  readonly usage?: Usage;
  readonly error?: string;
}

/**
 * Sent (by the server, not the feed) first to a page that resumes from an event this viewer
 * did not send: the viewer was restarted on the same port while the page stayed open. The
 * page forgets every run and diagram it has; everything this viewer keeps follows.
 */
export interface ResetEvent {
  readonly type: 'reset';
}

export type ViewerEvent =
  | DiagramEvent
  | RunStartEvent
  | StateEvent
  | ModelCallStartEvent
  | ModelCallEndEvent
  | ToolCallStartEvent
  | ToolCallEndEvent
  | RunEndEvent;

/** What the page's event stream carries: the feed's events, and a reset when it must start over. */
export type StreamEvent = ViewerEvent | ResetEvent;
