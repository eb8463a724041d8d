import * as restate from '@restatedev/restate-sdk';
import type { JournalErrorReason } from '../durable/journal-error.js';
import { REDISPATCH } from './retry-policy.js';
import { JOURNAL_SERVICE, RUN_SERVICE } from './service-names.js';

// X3: a run's journal kept in Restate, as the state of one virtual object per run id. An
// object's exclusive handlers run one at a time per key, in the order Restate received them,
// so appends to one run keep their order and a read sees every append accepted before it,
// whichever worker process or machine serves it. State survives the server's kill -9.
//
// Entries arrive as the JSON lines `entryLine` checked on the caller's side; the object keeps
// them as text, never looking inside beyond the `start` / `end` envelope.

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

export const journalObject = restate.object({
  name: JOURNAL_SERVICE,
  options: { retryPolicy: REDISPATCH },
  handlers: {
    async append(ctx: restate.ObjectContext, request: AppendRequest): Promise<JournalReply<null>> {
      const runId = ctx.key;
      let count = (await ctx.get<number>(COUNT)) ?? 0;
      const holder = await ctx.get<string>(HOLDER);
      // A second start is refused as such (attach instead), whoever sends it.
      const entries = request.lines.map((line) => JSON.parse(line) as Entry);
      const startsAgain = count > 0 && entries.some((entry) => entry.type === 'start');
      if (
        !startsAgain &&
        holder !== null &&
        request.holder !== undefined &&
        request.holder !== holder
      ) {
        return refused(
          'run-busy',
          `Run '${runId}' was taken over by another worker (its attempt was retried): this one may not write its journal any more`,
        );
      }
      for (const [index, entry] of entries.entries()) {
        const line = request.lines[index] as string;
        if (entry.type === 'start') {
          if (count > 0) {
            return refused(
              'run-exists',
              `Run "${runId}" already exists: attach to it or resume it instead of starting it again`,
            );
          }
          // The writer that creates a run holds it from its first entry on.
          if (request.holder !== undefined) ctx.set(HOLDER, request.holder);
          ctx.set<JournalListing>(LISTING, {
            kind: String(entry.kind),
            startedAt: Number(entry.startedAt),
            status: 'running',
          });
        } else if (count === 0) {
          return refused(
            'unknown-run',
            `Cannot append a "${String(entry.type)}" entry to run "${runId}": no such run (a run's first entry is its "start" entry)`,
          );
        }
        if (entry.type === 'end') {
          // An ended run has no more writers: nothing to release.
          ctx.clear(HOLDER);
          const listing = await ctx.get<JournalListing>(LISTING);
          const status = entry.status === 'succeeded' ? 'succeeded' : 'failed';
          if (listing) ctx.set<JournalListing>(LISTING, { ...listing, status });
        }
        ctx.set(entryKey(count), line);
        count++;
      }
      ctx.set(COUNT, count);
      return ok(null);
    },

    async read(ctx: restate.ObjectContext): Promise<JournalReply<string[] | null>> {
      const count = (await ctx.get<number>(COUNT)) ?? 0;
      return ok(count === 0 ? null : await readLines(ctx));
    },

    async delete(ctx: restate.ObjectContext): Promise<JournalReply<null>> {
      ctx.clearAll();
      return ok(null);
    },

    async post(ctx: restate.ObjectContext, line: string): Promise<JournalReply<null>> {
      const runId = ctx.key;
      const count = (await ctx.get<number>(COUNT)) ?? 0;
      const message = JSON.parse(line) as Entry;
      if (count === 0) {
        return refused(
          'unknown-run',
          `Cannot append a "${String(message.type)}" entry to run "${runId}": no such run (a run's first entry is its "start" entry)`,
        );
      }
      const inbox = (await ctx.get<string[]>(INBOX)) ?? [];
      ctx.set(INBOX, [...inbox, line]);
      if (message.type === 'decision' && typeof message.callId === 'string') {
        if (await ctx.get<boolean>(WORKFLOW)) {
          // The parked run waits on this call's durable promise: wake it. Durable (the send is
          // journaled with this handler), so a decision never lands without its wake-up.
          const asked = (await readLines(ctx)).filter((entryLine) => {
            const entry = JSON.parse(entryLine) as Entry;
            return entry.type === 'approval' && entry.callId === message.callId;
          }).length;
          ctx.genericSend({
            service: RUN_SERVICE,
            method: 'wake',
            key: runId,
            parameter: approvalPromiseName(message.callId, Math.max(1, asked)),
            inputSerde: restate.serde.json,
          });
        }
      }
      return ok(null);
    },

    async posted(ctx: restate.ObjectContext): Promise<JournalReply<string[]>> {
      return ok((await ctx.get<string[]>(INBOX)) ?? []);
    },

    /** Claims the journal for `holder`, taking it from any earlier holder (presumed dead). */
    async acquire(ctx: restate.ObjectContext, holder: string): Promise<JournalReply<null>> {
      ctx.set(HOLDER, holder);
      return ok(null);
    },

    async release(ctx: restate.ObjectContext, holder: string): Promise<JournalReply<null>> {
      if ((await ctx.get<string>(HOLDER)) === holder) ctx.clear(HOLDER);
      return ok(null);
    },

    /** The run is a workflow run: decisions posted for it must wake its workflow. */
    async markWorkflow(ctx: restate.ObjectContext): Promise<JournalReply<null>> {
      ctx.set(WORKFLOW, true);
      return ok(null);
    },
  },
});

/**
 * The durable promise a parked run waits on for the `nth` request of call `callId`:
 * `approval:<callId>`, and `approval:<callId>:<nth>` when a model reused the id in a later
 * step (a promise resolves once; the later request needs its own).
 */
export function approvalPromiseName(callId: string, nth: number): string {
  return nth <= 1 ? `approval:${callId}` : `approval:${callId}:${nth}`;
}
