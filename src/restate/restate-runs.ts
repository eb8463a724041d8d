import { type Approvals, approvals } from '../durable/approvals.js';
import { decode, encode } from '../durable/codec.js';
import { isStartEntry } from '../durable/journal-entry.js';
import { JournalMismatchError } from '../durable/journal-mismatch.js';
import { requestHash } from '../durable/request-hash.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { assertValidRunId } from '../durable/stores/run-id.js';
import { RestateHttp } from './ingress.js';
import { type RestateStoreOptions, restateStore } from './restate-store.js';
import { type RunOutcome, settle } from './run-outcome.js';
import type { RestateRunStatus, RunRequest, Submitted } from './run-workflow.js';
import { RUN_SERVICE } from './service-names.js';

/** What `submit` did: started the run, or found it submitted before and attached to it. */
export interface Submission {
  readonly runId: string;
  readonly attached: boolean;
}

/** Runs on a Restate deployment, from any process: submit, decide, read results and status. */
export interface RestateRuns {
  /** The journal store the runs live in: `approvals(store)`, `store.read(runId)`, `list()`. */
  readonly store: JournalStore;
  /** Decisions on waiting calls (SPEC H2), from any process: `approvals(runs.store)`. */
  readonly approvals: Approvals;
  /**
   * Starts `agent` (a name the workers registered) on `input` as run `runId`. Submitting an
   * id again attaches to that one run instead of starting a second; with another input than
   * the run started with, it is a JournalMismatchError, as `chain.invoke` would say.
   */
  submit(runId: string, agent: string, input: unknown): Promise<Submission>;
  /**
   * Waits for the run to end (at most `timeoutMs`, default the client's) and returns what the
   * agent's `invoke` resolved with; a failed run throws its error, revived with its class and
   * partial result (transcript, usage, steps).
   */
  result<T = unknown>(runId: string, options?: { readonly timeoutMs?: number }): Promise<T>;
  /** The run's status from Restate's state; undefined for an id never submitted. */
  status(runId: string): Promise<RestateRunStatus | undefined>;
}

/** A client of the `statecraftRun` workflow and its journals, over Restate's ingress. */
export function restateRuns(options: RestateStoreOptions): RestateRuns {
  const store = restateStore(options);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const ingress = new RestateHttp(options.url, timeoutMs);
  const path = (runId: string) => `/${RUN_SERVICE}/${encodeURIComponent(runId)}`;
  return {
    store,
    approvals: approvals(store),
    async submit(runId, agent, input) {
      assertValidRunId(runId);
      if (typeof agent !== 'string' || agent === '') {
        throw new TypeError('submit(runId, agent, input): agent is the name a worker registered');
      }
      const request: RunRequest = { agent, input: encode(input) };
      const sent = await ingress.post<{ status?: string }>(`${path(runId)}/run/send`, request);
      const attached = sent.status === 'PreviouslyAccepted';
      if (attached) await assertSameRequest(ingress, store, path(runId), runId, agent, input);
      return { runId, attached };
    },
    async result<T>(runId: string, resultOptions: { readonly timeoutMs?: number } = {}) {
      assertValidRunId(runId);
      const waiting = new RestateHttp(options.url, resultOptions.timeoutMs ?? timeoutMs);
      const outcome = await waiting.get<RunOutcome>(
        `/restate/workflow/${RUN_SERVICE}/${encodeURIComponent(runId)}/attach`,
      );
      return settle<T>(outcome);
    },
    async status(runId) {
      assertValidRunId(runId);
      const status = await ingress.post<RestateRunStatus | null>(`${path(runId)}/status`);
      return status ?? undefined;
    },
  };
}

/** How long a second submission waits for the first one's workflow to record its request. */
const SUBMITTED_WAIT_MS = 5_000;

/**
 * A second submission of an id must ask for what the first one did (agent and input), as
 * `chain.invoke` refuses other input under a run id. The workflow records the first request
 * as it starts; a second submission made before that waits for it a little, then lets it be.
 */
async function assertSameRequest(
  ingress: RestateHttp,
  store: JournalStore,
  runPath: string,
  runId: string,
  agent: string,
  input: unknown,
): Promise<void> {
  const deadline = Date.now() + SUBMITTED_WAIT_MS;
  const firstRequest = () => ingress.post<Submitted | null>(`${runPath}/submitted`);
  let first = await firstRequest();
  while (first === null && Date.now() <= deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    first = await firstRequest();
  }
  const actualHash = requestHash(input);
  if (first === null) {
    // Not recorded (a run submitted by an older statecraft, or not begun yet): the journal's
    // start entry still has the input, when the run has begun.
    const start = (await store.read(runId))?.[0];
    if (start === undefined || !isStartEntry(start)) return;
    first = { agent, inputHash: requestHash(decode(start.input)) };
  }
  if (first.agent === agent && first.inputHash === actualHash) return;
  throw new JournalMismatchError({
    entry: 0,
    expectedHash: first.agent === agent ? first.inputHash : `agent ${first.agent}`,
    actualHash: first.agent === agent ? actualHash : `agent ${agent}`,
    request: `input of run '${runId}' (a run id starts one run; submit a new id for new input)`,
  });
}
