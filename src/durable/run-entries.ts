import type { JsonValue } from '../viz/to-json.js';
import type { JournalEntry } from './journal-entry.js';

// The entries a durable run writes between its `start` and its `end` (journal-entry.ts):
// only what came from outside the pure machine, in the order the machine received it.
//
//   request  the machine asked for effect number `seq` (a model call, a tool step, a
//            validation, a plan…); written before the effect starts, with the hash of what
//            was asked, so a replay that asks something else is caught.
//   call     one tool call of effect `seq` is about to run (its intent): a crash before its
//            `result` means it may have run, and it is issued again once on resume.
//   result   that call's result.
//   answer   an event the effect sent the machine (`callModel.done`, `execute.record`…).
//   approval a call of effect `seq` waits for a person (SPEC H2): its tool, arguments, when it
//            began waiting and how long it may; written before anyone is asked.
//   decision the decision on that call (approved or not, or its deadline passed), written
//            when the machine takes it: the first decision is the one that counts.
//   abort    the run was aborted from outside (ABORT).
//   timer    a deadline fired (`maxExecutionTime`, the tool loop's `timeout`).
//   attachment the base64 bytes of an image or file that a later entry refers to by sha256
//            (an `attachment` tag, codec.ts); each distinct payload is written once, before
//            the first entry that refers to it. The run's input's are in its start entry.

export interface RequestEntry extends JournalEntry {
  readonly type: 'request';
  readonly seq: number;
  /** The request's type: `callModel`, `executeTools`, `plan`… */
  readonly effect: string;
  readonly hash: string;
}

export interface CallEntry extends JournalEntry {
  readonly type: 'call';
  readonly seq: number;
  readonly callId: string;
  readonly name: string;
}

export interface ResultEntry extends JournalEntry {
  readonly type: 'result';
  readonly seq: number;
  readonly callId: string;
  /** What the host journaled for the call (encoded): a ToolResult, a loop's record… */
  readonly result: JsonValue;
  /** Who ran it and how long it took, for details() after a resume. */
  readonly executor?: string;
  readonly ms?: number;
  /** Its afterToolCall threw, with these words: the step fails with that on resume too. */
  readonly hookFailed?: string;
}

export interface AnswerEntry extends JournalEntry {
  readonly type: 'answer';
  readonly seq: number;
  /** The event as the host journaled it (encoded; the host may leave out what it rebuilds). */
  readonly event: JsonValue;
  readonly ms?: number;
}

export interface ApprovalEntry extends JournalEntry {
  readonly type: 'approval';
  readonly seq: number;
  readonly callId: string;
  readonly tool: string;
  readonly arguments: JsonValue;
  /** Epoch milliseconds: the call's deadline counts from it, across restarts. */
  readonly at: number;
  readonly timeoutMs?: number;
}

export interface DecisionEntry extends JournalEntry {
  readonly type: 'decision';
  readonly seq: number;
  readonly callId: string;
  readonly approved: boolean;
  readonly reason?: string;
  readonly timedOut?: true;
}

export interface AbortEntry extends JournalEntry {
  readonly type: 'abort';
  readonly reason?: string;
}

export interface TimerEntry extends JournalEntry {
  readonly type: 'timer';
  /** The machine's name for the delay: `maxExecutionTime`, `loopTimeout`. */
  readonly name: string;
}

export interface AttachmentEntry extends JournalEntry {
  readonly type: 'attachment';
  /** sha256, in hex, of `data`. */
  readonly sha256: string;
  /** Base64. */
  readonly data: string;
}

/** What reaches the machine from outside its effects: replayed in journal order. */
export type ExternalEntry = AbortEntry | TimerEntry;

const has = (entry: JournalEntry, key: string, kind: 'string' | 'number') =>
  typeof entry[key] === kind;

export function isRequestEntry(entry: JournalEntry): entry is RequestEntry {
  return (
    entry.type === 'request' &&
    has(entry, 'seq', 'number') &&
    has(entry, 'effect', 'string') &&
    has(entry, 'hash', 'string')
  );
}

export function isCallEntry(entry: JournalEntry): entry is CallEntry {
  return entry.type === 'call' && has(entry, 'seq', 'number') && has(entry, 'callId', 'string');
}

export function isResultEntry(entry: JournalEntry): entry is ResultEntry {
  return (
    entry.type === 'result' &&
    has(entry, 'seq', 'number') &&
    has(entry, 'callId', 'string') &&
    'result' in entry
  );
}

export function isAnswerEntry(entry: JournalEntry): entry is AnswerEntry {
  return entry.type === 'answer' && has(entry, 'seq', 'number') && 'event' in entry;
}

export function isApprovalEntry(entry: JournalEntry): entry is ApprovalEntry {
  return (
    entry.type === 'approval' &&
    has(entry, 'seq', 'number') &&
    has(entry, 'callId', 'string') &&
    has(entry, 'tool', 'string') &&
    has(entry, 'at', 'number')
  );
}

export function isDecisionEntry(entry: JournalEntry): entry is DecisionEntry {
  return (
    entry.type === 'decision' &&
    has(entry, 'seq', 'number') &&
    has(entry, 'callId', 'string') &&
    typeof entry.approved === 'boolean'
  );
}

export function isAttachmentEntry(entry: JournalEntry): entry is AttachmentEntry {
  return (
    entry.type === 'attachment' && has(entry, 'sha256', 'string') && has(entry, 'data', 'string')
  );
}

export function isExternalEntry(entry: JournalEntry): entry is ExternalEntry {
  return entry.type === 'abort' || (entry.type === 'timer' && has(entry, 'name', 'string'));
}
