import * as restate from '@restatedev/restate-sdk';
import type { JournalErrorReason } from '../durable/journal-error.js';
import { admit } from './admission.js';
import type { Credential } from './credential.js';
import { REDISPATCH } from './retry-policy.js';
import { JOURNAL_SERVICE, RUN_SERVICE } from './service-names.js';

// X3: a run's journal kept in Restate, as the state of one virtual object per run id. An
// object's exclusive handlers run one at a time per key, in the order Restate received them,
// so appends to one run keep their order and a read sees every append accepted before it,
// whichever worker process or machine serves it. State survives the server's kill -9.
//
// Entries arrive as the JSON lines `entryLine` checked on the caller's side; the object keeps
// them as text, never looking inside beyond the `start` / `end` envelope (on a deployment
// with a secret the rest is sealed, sealing.ts). Every handler a client reaches through the
// ingress first checks the request's credential (admission.ts); `markWorkflow`, which only the
// run workflow calls, is private to Restate.

/** What a handler answers: its value, or the journal error the caller rethrows. */
export type JournalReply<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: JournalErrorReason; readonly message: string };

/** A run as `list` reports it: kept beside the entries so listing reads one key per run. */
export interface JournalListing {
  readonly kind: string;
  readonly startedAt: number;
  readonly status: 'running' | 'succeeded' | 'failed';
}

export interface AppendRequest {
  readonly lines: readonly string[];
  /** The writer's claim (see `acquire`); an append under an older claim is refused. */
  readonly holder?: string;
}

const COUNT = 'n';
const INBOX = 'inbox';
const HOLDER = 'holder';
/** Set by the run workflow: decisions posted for this run wake it (durable promises). */
const WORKFLOW = 'workflow';
export const LISTING = 'listing';
const entryKey = (index: number) => `e:${index}`;

const ok = <T>(value: T): JournalReply<T> => ({ ok: true, value });
const refused = (reason: JournalErrorReason, message: string): JournalReply<never> => ({
  ok: false,
  reason,
  message,
});

type Entry = { readonly type?: unknown; readonly [key: string]: unknown };

async function readLines(ctx: restate.ObjectContext): Promise<string[]> {
  const count = (await ctx.get<number>(COUNT)) ?? 0;
  const reads: Promise<string | null>[] = [];
  for (let i = 0; i < count; i++) reads.push(ctx.get<string>(entryKey(i)));
  return (await Promise.all(reads)).map((line) => line ?? '');
}

/** One line as an entry, or undefined when it is not a JSON object with a string `type`. */
function entryOf(line: unknown): Entry | undefined {
  if (typeof line !== 'string') return undefined;
  try {
    const entry = JSON.parse(line) as unknown;
    return typeof entry === 'object' &&
      entry !== null &&
      !Array.isArray(entry) &&
      typeof (entry as Entry).type === 'string'
      ? (entry as Entry)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The entries of an append request, or the refusal of a malformed one: a request anyone can
 * send to the ingress must never make the handler throw, or Restate would retry it while
 * every later call on the run waits behind it.
 */
function entriesOf(request: unknown): Entry[] | JournalReply<never> {
  const { lines, holder } = (request ?? {}) as Partial<AppendRequest>;
  const invalid = refused('invalid-entry', 'an append is { lines: [JSON entry lines], holder? }');
  if (!Array.isArray(lines) || (holder !== undefined && typeof holder !== 'string')) {
    return invalid;
  }
  const entries: Entry[] = [];
  for (const line of lines) {
    const entry = entryOf(line);
    if (entry === undefined) return invalid;
    entries.push(entry);
  }
  return entries;
}

/** The journal object of workers holding `credential` (none: an open deployment). */
export const journalObject = (credential: Credential | undefined) =>
  restate.object({
    name: JOURNAL_SERVICE,
    options: { retryPolicy: REDISPATCH },
    handlers: journalHandlers(credential),
  });

const journalHandlers = (credential: Credential | undefined) => ({
  async append(ctx: restate.ObjectContext, request: AppendRequest): Promise<JournalReply<null>> {
    admit(credential, ctx);
    const runId = ctx.key;
    const entries = entriesOf(request);
    if (!Array.isArray(entries)) return entries;
    const count = (await ctx.get<number>(COUNT)) ?? 0;
    // The whole request is checked before anything is written: all of it is kept, or none.
    let next = count;
    for (const entry of entries) {
      if (entry.type === 'start' && next > 0) {
        return refused(
          'run-exists',
          `Run "${runId}" already exists: attach to it or resume it instead of starting it again`,
        );
      }
      if (entry.type !== 'start' && next === 0) {
        return refused(
          'unknown-run',
          `Cannot append a "${String(entry.type)}" entry to run "${runId}": no such run (a run's first entry is its "start" entry)`,
        );
      }
      next++;
    }
    // The fence: once a writer has claimed the run (acquire, or its start entry), a writer
    // with an older claim, or none, writes nothing more: a claim is only replaced by a newer one.
    const holder = await ctx.get<string>(HOLDER);
    if (holder !== null && count > 0 && request.holder !== holder) {
      return refused(
        'run-busy',
        `Run '${runId}' was taken over by another worker (its attempt was retried): this one may not write its journal any more`,
      );
    }
    for (const [index, entry] of entries.entries()) {
      if (entry.type === 'start') {
        if (request.holder !== undefined) ctx.set(HOLDER, request.holder);
        ctx.set<JournalListing>(LISTING, {
          kind: String(entry.kind),
          startedAt: Number(entry.startedAt),
          status: 'running',
        });
      }
      if (entry.type === 'end') {
        const listing = await ctx.get<JournalListing>(LISTING);
        const status = entry.status === 'succeeded' ? 'succeeded' : 'failed';
        if (listing) ctx.set<JournalListing>(LISTING, { ...listing, status });
      }
      ctx.set(entryKey(count + index), request.lines[index] as string);
    }
    ctx.set(COUNT, next);
    return ok(null);
  },

  async read(ctx: restate.ObjectContext): Promise<JournalReply<string[] | null>> {
    admit(credential, ctx);
    const count = (await ctx.get<number>(COUNT)) ?? 0;
    return ok(count === 0 ? null : await readLines(ctx));
  },

  async delete(ctx: restate.ObjectContext): Promise<JournalReply<null>> {
    admit(credential, ctx);
    ctx.clearAll();
    return ok(null);
  },

  async post(ctx: restate.ObjectContext, line: string): Promise<JournalReply<null>> {
    admit(credential, ctx);
    const runId = ctx.key;
    const message = entryOf(line);
    if (message === undefined) return refused('invalid-entry', 'a message is one JSON entry line');
    const count = (await ctx.get<number>(COUNT)) ?? 0;
    if (count === 0) {
      return refused(
        'unknown-run',
        `Cannot append a "${String(message.type)}" entry to run "${runId}": no such run (a run's first entry is its "start" entry)`,
      );
    }
    const inbox = (await ctx.get<string[]>(INBOX)) ?? [];
    ctx.set(INBOX, [...inbox, line]);
    const isDecision = message.type === 'decision' && typeof message.callId === 'string';
    if (isDecision && (await ctx.get<boolean>(WORKFLOW))) {
      // The parked run waits on the durable promise of the request this decision answers
      // (the one it names, else the call's latest): wake it. Durable (the send is journaled
      // with this handler), so a decision never lands without its wake-up.
      const asks = await approvalsOfCall(ctx, String(message.callId));
      const named = asks.findIndex((ask) => ask.at === message.requestedAt);
      const nth = named >= 0 ? named + 1 : Math.max(1, asks.length);
      ctx.genericSend({
        service: RUN_SERVICE,
        method: 'wake',
        key: runId,
        parameter: approvalPromiseName(String(message.callId), nth),
        inputSerde: restate.serde.json,
      });
    }
    return ok(null);
  },

  async posted(ctx: restate.ObjectContext): Promise<JournalReply<string[]>> {
    admit(credential, ctx);
    return ok((await ctx.get<string[]>(INBOX)) ?? []);
  },

  /**
   * Claims the journal for `holder`, taking it from any earlier holder (presumed dead: Restate
   * runs a segment again only once its attempt ended). The claim stays until the next one.
   */
  async acquire(ctx: restate.ObjectContext, holder: string): Promise<JournalReply<null>> {
    admit(credential, ctx);
    if (typeof holder !== 'string' || holder === '') {
      return refused('invalid-entry', "acquire takes the holder's token, a string");
    }
    ctx.set(HOLDER, holder);
    return ok(null);
  },

  /**
   * The run is a workflow run: decisions posted for it must wake its workflow. Called by
   * the run workflow only, so private: Restate refuses it on the ingress.
   */
  markWorkflow: restate.handlers.object.exclusive(
    { ingressPrivate: true },
    async (ctx: restate.ObjectContext): Promise<JournalReply<null>> => {
      ctx.set(WORKFLOW, true);
      return ok(null);
    },
  ),
});

/** The journal's approval requests of one call id, in order (a model may reuse an id). */
async function approvalsOfCall(ctx: restate.ObjectContext, callId: string): Promise<Entry[]> {
  return (await readLines(ctx))
    .map((line) => JSON.parse(line) as Entry)
    .filter((entry) => entry.type === 'approval' && entry.callId === callId);
}

/**
 * The durable promise a parked run waits on for the `nth` request of call `callId`:
 * `approval:<callId>`, and `approval:<callId>:<nth>` when a model reused the id in a later
 * step (a promise resolves once; the later request needs its own).
 */
export function approvalPromiseName(callId: string, nth: number): string {
  return nth <= 1 ? `approval:${callId}` : `approval:${callId}:${nth}`;
}
