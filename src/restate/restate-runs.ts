import { type Approvals, approvals } from '../durable/approvals.js';
import { inputOfStart } from '../durable/attachment-bytes.js';
import { encode } from '../durable/codec.js';
import { inputChanges } from '../durable/config-fields.js';
import { isStartEntry } from '../durable/journal-entry.js';
import { JournalError } from '../durable/journal-error.js';
import { type JournalChange, JournalMismatchError } from '../durable/journal-mismatch.js';
import { requestHash } from '../durable/request-hash.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { assertValidRunId } from '../durable/stores/run-id.js';
import { type Credential, credentialOf } from './credential.js';
import { RestateCredentialError } from './credential-error.js';
import { RestateHttp } from './ingress.js';
import { type RestateStoreOptions, restateStore } from './restate-store.js';
import { type RunOutcome, type SealedOutcome, settle } from './run-outcome.js';
import type { RestateRunStatus, RunRequest, Submitted } from './run-workflow.js';
import { seal, unseal } from './sealing.js';
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

/**
 * A client of the `statecraftRun` workflow and its journals, over Restate's ingress. With a
 * `secret`, every request is signed, a run's input goes sealed and its outcome comes back
 * sealed (see credential.ts, sealing.ts).
 */
export function restateRuns(options: RestateStoreOptions): RestateRuns {
  const store = restateStore(options);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const credential = credentialOf(options.secret);
  const ingress = new RestateHttp(options.url, timeoutMs, {
    headers: options.headers,
    credential,
  });
  const target = (runId: string, handler: string) => ({
    service: RUN_SERVICE,
    key: runId,
    handler,
  });
  // Before this client's first submission: does the deployment take its credential? Restate
  // runs a workflow once per id, so a refused submission would take the id all the same.
  let admitted: Promise<unknown> | undefined;
  const admission = (runId: string) => {
    admitted ??= ingress.invoke(target(runId, 'submitted')).catch((error: unknown) => {
      admitted = undefined;
      throw error;
    });
    return admitted;
  };
  return {
    store,
    approvals: approvals(store),
    async submit(runId, agent, input) {
      assertValidRunId(runId);
      if (typeof agent !== 'string' || agent === '') {
        throw new TypeError('submit(runId, agent, input): agent is the name a worker registered');
      }
      await admission(runId);
      const encoded = JSON.stringify(encode(input));
      const request: RunRequest = credential
        ? { agent, sealedInput: seal(credential, 'input', runId, encoded) }
        : { agent, input: JSON.parse(encoded) };
      const sent = await ingress.invoke<{ status?: string }>(target(runId, 'run'), request, {
        send: true,
      });
      const attached = sent.status === 'PreviouslyAccepted';
      if (attached) {
        await assertSameRequest(
          () => ingress.invoke<Submitted | null>(target(runId, 'submitted')),
          store,
          credential,
          runId,
          agent,
          input,
        );
      }
      return { runId, attached };
    },
    async result<T>(runId: string, resultOptions: { readonly timeoutMs?: number } = {}) {
      assertValidRunId(runId);
      const waiting = ingress.withTimeout(resultOptions.timeoutMs ?? timeoutMs);
      const path = `/restate/workflow/${RUN_SERVICE}/${encodeURIComponent(runId)}/attach`;
      const outcome = await waiting.get<RunOutcome | SealedOutcome>(path).catch((error) => {
        if (!RestateCredentialError.isInstance(error)) throw error;
        // The workers refused the run's submission, not this client (which may hold the secret).
        throw new RestateCredentialError(
          error.url,
          error.status,
          error.reason,
          `run '${runId}' was submitted without a valid credential and refused`,
          "its submitter did not have the workers' `secret`; the id stays taken: submit under a new id, with the secret",
        );
      });
      if (!('sealed' in outcome)) return settle<T>(outcome);
      const opened = unseal(credential, 'outcome', runId, outcome.sealed);
      if (!opened.ok) {
        throw new RestateCredentialError(
          `${options.url}${path}`,
          200,
          opened.reason,
          `the outcome of run '${runId}' is sealed with ${opened.reason === 'missing' ? 'a secret' : 'another secret'}`,
        );
      }
      return settle<T>(JSON.parse(opened.text) as RunOutcome);
    },
    async status(runId) {
      assertValidRunId(runId);
      const status = await ingress.invoke<RestateRunStatus | null>(target(runId, 'status'));
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
  firstRequest: () => Promise<Submitted | null>,
  store: JournalStore,
  credential: Credential | undefined,
  runId: string,
  agent: string,
  input: unknown,
): Promise<void> {
  const deadline = Date.now() + SUBMITTED_WAIT_MS;
  let first = await firstRequest();
  while (first === null && Date.now() <= deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    first = await firstRequest();
  }
  if (first?.refused) {
    throw new JournalError(
      'run-exists',
      `Run id '${runId}' was first submitted without the deployment's credential, and that submission was refused: submit under a new id`,
      { runId },
    );
  }
  // As the workflow hashes it (run-workflow.ts): keyed with the secret, when there is one,
  // under any of them while one replaces another (the first run may predate the new one).
  const hashesOf = (value: unknown) =>
    credential ? credential.keyedHashes(requestHash(value)) : [requestHash(value)];
  const actualHashes = hashesOf(input);
  const actualHash = actualHashes[0] as string;
  if (first === null) {
    // Not recorded (a run submitted by an older statecraft, or not begun yet): the journal's
    // start entry still has the input, when the run has begun.
    const start = (await store.read(runId))?.[0];
    if (start === undefined || !isStartEntry(start)) return;
    first = { agent, inputHash: hashesOf(inputOfStart(start))[0] as string };
  }
  if (first.agent === agent && actualHashes.includes(first.inputHash)) return;
  throw new JournalMismatchError({
    entry: 0,
    expectedHash: first.agent === agent ? first.inputHash : `agent ${first.agent}`,
    actualHash: first.agent === agent ? actualHash : `agent ${agent}`,
    request: `input of run '${runId}'`,
    changes:
      first.agent === agent
        ? await journaledInputChanges(store, runId, input)
        : [{ option: 'agent', values: `${first.agent} → ${agent}` }],
    advice: 'A run id starts one run: submit a new id for new input.',
  });
}

/**
 * What differs between `input` and the input the run's journal started with, when the run has
 * begun and its start entry can be read; none otherwise (the message then gives the hashes).
 */
async function journaledInputChanges(
  store: JournalStore,
  runId: string,
  input: unknown,
): Promise<readonly JournalChange[]> {
  try {
    const start = (await store.read(runId))?.[0];
    if (start === undefined || !isStartEntry(start)) return [];
    return inputChanges(inputOfStart(start), input);
  } catch {
    return [];
  }
}
