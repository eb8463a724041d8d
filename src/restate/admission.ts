import * as restate from '@restatedev/restate-sdk';
import { type Credential, type CredentialRefusal, refusalOf } from './credential.js';
import { refusalMessage } from './credential-error.js';

// The handlers' side of the credential (credential.ts): every handler a client can reach
// through the ingress admits its request first, before it reads or writes anything.

/** HTTP status of a refused request: Restate's ingress answers with a terminal error's code. */
const UNAUTHORIZED = 401;

/** Throws, as a terminal error (never retried), unless workers holding `credential` may serve this request. */
export function admit(
  credential: Credential | undefined,
  ctx: { request(): restate.Request },
): void {
  const refusal = refusalFor(credential, ctx);
  if (refusal !== undefined) throw refusedError(refusal);
}

/** Why workers holding `credential` (none: an open deployment) may not serve this request, if so. */
export function refusalFor(
  credential: Credential | undefined,
  ctx: { request(): restate.Request },
): CredentialRefusal | undefined {
  const request = ctx.request();
  const { service, key, handler } = request.target;
  return refusalOf(credential, {
    target: { service, key, handler },
    headers: request.headers,
    body: request.body,
  });
}

/** The terminal error a refused request ends with; the client reads it as a RestateCredentialError. */
export function refusedError(refusal: CredentialRefusal): restate.TerminalError {
  return new restate.TerminalError(refusalMessage(refusal), { errorCode: UNAUTHORIZED });
}
