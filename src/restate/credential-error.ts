import type { CredentialRefusal } from './credential.js';
import { RestateRequestError } from './request-error.js';

/**
 * The workers and this client do not hold the same credential: the workers refused the
 * request, or what Restate kept of a run is sealed with another secret than this client's.
 * `reason` says which side lacks what: `missing`, this client has no `secret` and the workers
 * have one; `mismatch`, both have one and they differ; `unexpected`, this client has one and
 * the workers have none (their deployment is open to anyone who reaches the ingress).
 */
export class RestateCredentialError extends RestateRequestError {
  static override readonly code: string = 'RESTATE_CREDENTIAL';
  readonly reason: CredentialRefusal;
  /** The option to set: `secret`, on the side the message names. */
  readonly option = 'secret';

  /** `what` was refused or could not be opened; `advice` replaces the one of `reason`. */
  constructor(
    url: string,
    status: number,
    reason: CredentialRefusal,
    what: string,
    advice = ADVICE[reason],
  ) {
    super(url, status, advice);
    this.reason = reason;
    this.message = `Restate's workers and this client do not share a credential (${what}): ${advice}`;
  }
}

const ADVICE: Record<CredentialRefusal, string> = {
  missing:
    "this client has no secret and the workers require one: give restateStore / restateRuns the workers' `secret` (the one serveWorker / serveCluster were given)",
  mismatch:
    "this client's `secret` is not the workers' one: give restateStore / restateRuns and serveWorker / serveCluster the same `secret`",
  unexpected:
    'the workers have no secret, so they serve anyone who reaches the ingress: give serveWorker / serveCluster the same `secret` as this client (or drop it from this client to use an open deployment)',
};

// How a handler's refusal crosses the ingress: a terminal error with HTTP status 401 whose
// message starts with this tag and the reason (Restate answers it as `{ code, message }`).
const TAG = 'statecraft-credential';
const REFUSAL = new RegExp(`^${TAG} (missing|mismatch|unexpected)\\b`);

/** The message a handler refuses a request with (also what a raw HTTP client reads). */
export function refusalMessage(reason: CredentialRefusal): string {
  const why: Record<CredentialRefusal, string> = {
    missing: `the request carries no signature; these workers require one (${TAG})`,
    mismatch: 'the request is not signed with the secret these workers hold',
    unexpected: 'the request is signed, and these workers have no secret to check it with',
  };
  return `${TAG} ${reason}: ${why[reason]}`;
}

/** The refusal a Restate error answer carries, if it is a handler's credential refusal. */
export function refusalIn(status: number, message: string): CredentialRefusal | undefined {
  if (status !== 401) return undefined;
  return REFUSAL.exec(message)?.[1] as CredentialRefusal | undefined;
}
