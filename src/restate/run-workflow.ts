import * as restate from '@restatedev/restate-sdk';
import { decode } from '../durable/codec.js';
import { requestHash } from '../durable/request-hash.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { ConfigError } from '../errors.js';
import type { JsonValue } from '../viz/to-json.js';
import { journalObject } from './journal-object.js';
import { REDISPATCH } from './retry-policy.js';
import { failed, type RunOutcome } from './run-outcome.js';
import { type Agent, type Agents, runSegment, type Segment, type Waiting } from './run-segment.js';
import { RUN_SERVICE } from './service-names.js';

// X3: one Restate workflow per run id. Restate guarantees the workflow's `run` handler runs
// once per id (a second submission attaches), re-dispatches it to a live worker when its worker
// dies, and keeps its promises, timers and state across a kill -9 of everything.
//
// The run itself goes forward in *segments*: one `ctx.run` each, which runs or resumes the
// chain / tool loop on its statecraft journal (restateStore) until it ends or has nothing left
// but waiting for people. A worker that dies mid-segment is replaced by a retry of that same
// segment, which resumes the journal: no finished model or tool call runs again, an in-flight
// one runs again once with its idempotency key. A parked run holds no worker at all: the
// workflow suspends on the durable promises of its waiting calls (resolved when a decision is
// posted, journal-object.ts) raced against a durable sleep until the first deadline, and the
// next segment takes the decision or fires the deadline, once, from the journal.

/** What `submit` sends: which registered agent runs, and its input (codec-encoded). */
export interface RunRequest {
  readonly agent: string;
  readonly input: JsonValue;
}

/** A run's status, kept in the workflow's Restate state. */
export type RestateRunStatus =
  | { readonly state: 'running'; readonly agent: string; readonly segment: number }
  | {
      readonly state: 'awaiting-approval';
      readonly agent: string;
      readonly segment: number;
      readonly waiting: readonly Waiting[];
    }
  | { readonly state: 'succeeded' | 'failed'; readonly agent: string; readonly segment: number };

export interface RunWorkflowOptions {
  /** The chains and tool loops this worker runs, by the name `submit` gives. */
  readonly agents: Agents;
  /** Where the runs' journals live; every worker of a deployment must share it. */
  readonly store: JournalStore;
}

const STATUS = 'status';
const SUBMITTED = 'submitted';
/** The longest a stale park waits before looking again (see `idleParks`). */
const MAX_IDLE_MS = 60_000;

/** What the first submission of a run id asked for (a later one must ask the same). */
export interface Submitted {
  readonly agent: string;
  readonly inputHash: string;
}

// A segment that fails for a reason outside the run (the journal unreachable, a fenced
// writer) is retried by Restate with backoff, and gives up after this long: every wait bounded.
const SEGMENT_RETRY = {
  initialRetryInterval: 100,
  maxRetryInterval: 5_000,
  maxRetryDuration: 10 * 60_000,
} as const;

/** The hash `submit` compares a second submission's input with (of the raw JSON if unreadable). */
function inputHashOf(request: RunRequest | undefined): string {
  try {
    return requestHash(decode(request?.input));
  } catch {
    return requestHash(request?.input ?? null);
  }
}

/** Why `request` cannot run on this worker: an agent it does not serve, input it cannot read. */
function refusedRequest(request: RunRequest | undefined, agents: Agents): Error | undefined {
  const name = request?.agent;
  if (typeof name !== 'string' || !Object.hasOwn(agents, name)) {
    return new ConfigError(
      'agent',
      `No agent '${String(name)}' on this worker (it runs: ${Object.keys(agents).join(', ') || 'none'})`,
    );
  }
  try {
    decode(request?.input);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  return undefined;
}

export function runWorkflow({ agents, store }: RunWorkflowOptions) {
  return restate.workflow({
    name: RUN_SERVICE,
    options: { retryPolicy: REDISPATCH },
    handlers: {
      async run(ctx: restate.WorkflowContext, request: RunRequest): Promise<RunOutcome> {
        const runId = ctx.key;
        const agentName = String(request?.agent);
        // What was submitted, for a second submission to be checked against (restate-runs.ts).
        ctx.set<Submitted>(SUBMITTED, { agent: agentName, inputHash: inputHashOf(request) });
        // A request anyone can send to the ingress: one that cannot run ends the run failed
        // (a throw here would be retried forever).
        const refusal = refusedRequest(request, agents);
        if (refusal) {
          ctx.set<RestateRunStatus>(STATUS, { state: 'failed', agent: agentName, segment: 0 });
          return failed(refusal);
        }
        const agent = agents[agentName] as Agent;
        // Before any decision can be posted: from now on a decision wakes this workflow.
        await ctx.objectClient(journalObject, runId).markWorkflow();
        // Promises this workflow has woken on: their decision was posted, so the segment after
        // takes it. One listed again was not taken (posted too late, say): not waited on twice.
        const consumed = new Set<string>();
        let idleParks = 0;
        for (let segment = 1; ; segment++) {
          ctx.set<RestateRunStatus>(STATUS, { state: 'running', agent: request.agent, segment });
          let step: Segment;
          try {
            step = await ctx.run(
              `segment ${segment}`,
              () => runSegment(agent, runId, request.input, store),
              SEGMENT_RETRY,
            );
          } catch (error) {
            // The segment's retries ran out (the journal unreachable for SEGMENT_RETRY).
            if (!(error instanceof restate.TerminalError)) throw error;
            ctx.set<RestateRunStatus>(STATUS, { state: 'failed', agent: request.agent, segment });
            return failed(error);
          }
          if (step.kind === 'ended') {
            const state = step.outcome.ok ? 'succeeded' : 'failed';
            ctx.set<RestateRunStatus>(STATUS, { state, agent: request.agent, segment });
            return step.outcome;
          }
          ctx.set<RestateRunStatus>(STATUS, {
            state: 'awaiting-approval',
            agent: request.agent,
            segment,
            waiting: step.waiting,
          });
          const fresh = step.waiting.filter((waiting) => !consumed.has(waiting.promise));
          const wakeups: restate.RestatePromise<string | undefined>[] = fresh.map((waiting) =>
            ctx
              .promise<unknown>(waiting.promise)
              .get()
              .map(() => waiting.promise),
          );
          // A park that waits on nothing new would wake at once, forever: look again later,
          // backing off, until a deadline or a decision changes something.
          const stale = fresh.length < step.waiting.length || step.waiting.length === 0;
          idleParks = stale ? idleParks + 1 : 0;
          const backoff = stale ? Math.min(MAX_IDLE_MS, 1_000 * 2 ** (idleParks - 1)) : undefined;
          const sleepMs =
            step.wakeInMs === undefined || backoff === undefined
              ? (step.wakeInMs ?? backoff)
              : Math.min(step.wakeInMs, backoff);
          if (sleepMs !== undefined) {
            wakeups.push(ctx.sleep(sleepMs, 'deadline').map(() => undefined));
          }
          const woke = await restate.RestatePromise.race(wakeups);
          if (woke !== undefined) consumed.add(woke);
        }
      },

      /** A decision was posted for a waiting call: resolve its durable promise (first wins). */
      async wake(ctx: restate.WorkflowSharedContext, promise: string): Promise<boolean> {
        try {
          await ctx.promise<boolean>(promise).resolve(true);
          return true;
        } catch (error) {
          if (error instanceof restate.TerminalError) return false; // woken before
          throw error;
        }
      },

      async status(ctx: restate.WorkflowSharedContext): Promise<RestateRunStatus | null> {
        return ctx.get<RestateRunStatus>(STATUS);
      },

      async submitted(ctx: restate.WorkflowSharedContext): Promise<Submitted | null> {
        return ctx.get<Submitted>(SUBMITTED);
      },
    },
  });
}
