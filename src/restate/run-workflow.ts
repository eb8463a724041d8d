import * as restate from '@restatedev/restate-sdk';
import { decode } from '../durable/codec.js';
import { requestHash } from '../durable/request-hash.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { ConfigError } from '../errors.js';
import type { JsonValue } from '../viz/to-json.js';
import { admit, refusalFor, refusedError } from './admission.js';
import type { Credential } from './credential.js';
import { REDISPATCH } from './retry-policy.js';
import { failed, type RunOutcome, type SealedOutcome } from './run-outcome.js';
import { type Agent, type Agents, runSegment, type Segment, type Waiting } from './run-segment.js';
import { seal, unseal } from './sealing.js';
import { JOURNAL_SERVICE, RUN_SERVICE } from './service-names.js';

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
//
// On a deployment with a secret, `run`, `status` and `submitted` serve signed requests only
// (admission.ts), `wake` is private to Restate, and the run's input and outcome are sealed
// (sealing.ts): Restate's ingress hands a workflow's output to anyone who attaches to it.

/**
 * What `submit` sends: which registered agent runs, and its input (codec-encoded), as it is
 * (`input`), or sealed with the deployment's secret (`sealedInput`).
 */
export interface RunRequest {
  readonly agent: string;
  readonly input?: JsonValue;
  readonly sealedInput?: string;
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
  /** The deployment's credential: requests are checked with it, inputs and outcomes sealed. */
  readonly credential?: Credential | undefined;
}

const STATUS = 'status';
const SUBMITTED = 'submitted';
/** The longest a stale park waits before looking again (see `idleParks`). */
const MAX_IDLE_MS = 60_000;

/** What the first submission of a run id asked for (a later one must ask the same). */
export interface Submitted {
  readonly agent: string;
  /** With a secret, keyed with it: a plain hash of a short input could be guessed from the admin API. */
  readonly inputHash: string;
  /** The submission carried no valid credential, and its run was refused. */
  readonly refused?: true;
}

// A segment that fails for a reason outside the run (the journal unreachable, a fenced
// writer) is retried by Restate with backoff, and gives up after this long: every wait bounded.
const SEGMENT_RETRY = {
  initialRetryInterval: 100,
  maxRetryInterval: 5_000,
  maxRetryDuration: 10 * 60_000,
} as const;

/** The hash `submit` compares a second submission's input with (of the raw JSON if unreadable). */
export function inputHashOf(
  input: JsonValue | undefined,
  credential: Credential | undefined,
): string {
  let hash: string;
  try {
    hash = requestHash(decode(input));
  } catch {
    hash = requestHash(input ?? null);
  }
  return credential ? credential.keyedHash(hash) : hash;
}

/** The request's input, opened when sealed; an error when it cannot be. */
function inputOf(
  request: RunRequest | undefined,
  credential: Credential | undefined,
  runId: string,
): JsonValue | Error {
  if (typeof request?.sealedInput !== 'string') return request?.input ?? null;
  const opened = unseal(credential, 'input', runId, request.sealedInput);
  if (!opened.ok)
    return new ConfigError(
      'secret',
      `The input of run '${runId}' is sealed with another secret than this worker's`,
    );
  return JSON.parse(opened.text) as JsonValue;
}

/** Why `request` cannot run on this worker: an agent it does not serve, input it cannot read. */
function refusedRequest(
  request: RunRequest | undefined,
  input: JsonValue | Error,
  agents: Agents,
): Error | undefined {
  if (input instanceof Error) return input;
  const name = request?.agent;
  if (typeof name !== 'string' || !Object.hasOwn(agents, name)) {
    return new ConfigError(
      'agent',
      `No agent '${String(name)}' on this worker (it runs: ${Object.keys(agents).join(', ') || 'none'})`,
    );
  }
  try {
    decode(input);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  return undefined;
}

export function runWorkflow({ agents, store, credential }: RunWorkflowOptions) {
  return restate.workflow({
    name: RUN_SERVICE,
    options: { retryPolicy: REDISPATCH },
    handlers: {
      async run(
        ctx: restate.WorkflowContext,
        request: RunRequest,
      ): Promise<RunOutcome | SealedOutcome> {
        const runId = ctx.key;
        const agentName = String(request?.agent);
        const sealed = (outcome: RunOutcome): RunOutcome | SealedOutcome =>
          credential
            ? { sealed: seal(credential, 'outcome', runId, JSON.stringify(outcome)) }
            : outcome;
        const input = inputOf(request, credential, runId);
        // Whether the request may run, and what it asked for, checked once and journaled: a
        // handler must take the same path each time Restate replays it, and this one may be
        // replayed days later by a worker holding other secrets (a rotation).
        const admission = refusalFor(credential, ctx) ?? null;
        const checked = await ctx.run('admit', () => {
          if (admission !== null) return { admission, submitted: null, refused: null };
          // A request anyone can send to the ingress: one that cannot run ends the run failed
          // (a throw here would be retried forever).
          const refusal = refusedRequest(request, input, agents);
          return {
            admission,
            submitted: {
              agent: agentName,
              inputHash: input instanceof Error ? '' : inputHashOf(input, credential),
            },
            refused: refusal === undefined ? null : sealed(failed(refusal)),
          };
        });
        if (checked.admission !== null || checked.submitted === null) {
          // The id is taken all the same (Restate runs a workflow once per id): a submission
          // of it with the credential learns why (restate-runs.ts).
          ctx.set<Submitted>(SUBMITTED, { agent: agentName, inputHash: '', refused: true });
          ctx.set<RestateRunStatus>(STATUS, { state: 'failed', agent: agentName, segment: 0 });
          throw refusedError(checked.admission ?? 'missing');
        }
        // What was submitted, for a second submission to be checked against (restate-runs.ts).
        ctx.set<Submitted>(SUBMITTED, checked.submitted);
        if (checked.refused !== null) {
          ctx.set<RestateRunStatus>(STATUS, { state: 'failed', agent: agentName, segment: 0 });
          return checked.refused;
        }
        const agent = agents[agentName] as Agent;
        // Before any decision can be posted: from now on a decision wakes this workflow.
        await ctx.genericCall({
          service: JOURNAL_SERVICE,
          method: 'markWorkflow',
          key: runId,
          parameter: null,
          inputSerde: restate.serde.json,
          outputSerde: restate.serde.json,
        });
        // Promises this workflow has woken on: their decision was posted, so the segment after
        // takes it. One listed again was not taken (posted too late, say): not waited on twice.
        const consumed = new Set<string>();
        let idleParks = 0;
        for (let segment = 1; ; segment++) {
          ctx.set<RestateRunStatus>(STATUS, { state: 'running', agent: request.agent, segment });
          let step: Segment;
          try {
            // Its outcome sealed in the step: Restate keeps each step's result in its journal.
            step = await ctx.run(
              `segment ${segment}`,
              async () => {
                // Opened when it was admitted, but no longer (its secret was dropped since).
                if (input instanceof Error) throw new restate.TerminalError(input.message);
                return sealedSegment(await runSegment(agent, runId, input, store), sealed);
              },
              SEGMENT_RETRY,
            );
          } catch (error) {
            // The segment's retries ran out (the journal unreachable for SEGMENT_RETRY).
            if (!(error instanceof restate.TerminalError)) throw error;
            ctx.set<RestateRunStatus>(STATUS, { state: 'failed', agent: request.agent, segment });
            return sealed(failed(error));
          }
          if (step.kind === 'ended') {
            const state = step.ok ? 'succeeded' : 'failed';
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

      /**
       * A decision was posted for a waiting call: resolve its durable promise (first wins).
       * Sent by the journal object only, so private: Restate refuses it on the ingress.
       */
      wake: restate.handlers.workflow.shared(
        { ingressPrivate: true },
        async (ctx: restate.WorkflowSharedContext, promise: string): Promise<boolean> => {
          try {
            await ctx.promise<boolean>(promise).resolve(true);
            return true;
          } catch (error) {
            if (error instanceof restate.TerminalError) return false; // woken before
            throw error;
          }
        },
      ),

      async status(ctx: restate.WorkflowSharedContext): Promise<RestateRunStatus | null> {
        admit(credential, ctx);
        return ctx.get<RestateRunStatus>(STATUS);
      },

      async submitted(ctx: restate.WorkflowSharedContext): Promise<Submitted | null> {
        admit(credential, ctx);
        return ctx.get<Submitted>(SUBMITTED);
      },
    },
  });
}

/** The segment with its outcome, if it ended, as the workflow returns it (sealed with a secret). */
function sealedSegment(
  step: Segment,
  sealed: (outcome: RunOutcome) => RunOutcome | SealedOutcome,
): Segment {
  return step.kind === 'ended' ? { ...step, outcome: sealed(step.outcome as RunOutcome) } : step;
}
