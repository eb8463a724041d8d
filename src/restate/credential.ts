import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { OptionProblems } from '../options/option-problems.js';

// Q9: what protects a deployment's handlers on Restate's ingress. Restate OSS checks no
// credential there, so the handlers do: every request a client or worker sends carries an
// HMAC of what it asks (service, key, handler, body) under a key derived from a secret the
// clients and the workers share. The secret itself never travels, so Restate, which keeps
// every request's headers in its journal (readable on the admin API), never holds it, and a
// signature seen on the wire or in that journal is good for that same request only.

/** The header that carries a request's signature. */
export const SIGNATURE_HEADER = 'x-statecraft-signature';
const VERSION = 'v1';
/** Shortest secret accepted: a shared secret is only as strong as it is long and random. */
export const MIN_SECRET_LENGTH = 32;

/** What a request asks Restate to invoke: the handler's service, its key (if any), its name. */
export interface Target {
  readonly service: string;
  readonly key?: string | undefined;
  readonly handler: string;
}

/** Why a handler refused a request, as it tells the client (see `refusalOf`). */
export type CredentialRefusal =
  /** The workers have a secret; the request carries no signature. */
  | 'missing'
  /** The request's signature is not the one the workers' secret gives. */
  | 'mismatch'
  /** The request carries a signature; the workers have no secret to check it with. */
  | 'unexpected';

/**
 * The keys a deployment's secret gives: one signs requests, one seals what Restate keeps of
 * a run (see sealing.ts), one keys the hashes a workflow keeps in its state. Derived with
 * HKDF, so that none of them can be worked out from another.
 */
export class Credential {
  readonly #signing: Buffer;
  readonly sealing: Buffer;
  readonly #hashing: Buffer;

  constructor(secret: string) {
    const derive = (purpose: string) =>
      Buffer.from(hkdfSync('sha256', secret, 'statecraft/restate', purpose, 32));
    this.#signing = derive(`request signature ${VERSION}`);
    this.sealing = derive(`sealing ${VERSION}`);
    this.#hashing = derive(`keyed hash ${VERSION}`);
  }

  /** The signature header's value for a request of `body` (the exact text sent) to `target`. */
  sign(target: Target, body: string | Uint8Array): string {
    return `${VERSION}=${this.#mac(target, body).toString('base64url')}`;
  }

  /** Whether `signature` is this credential's for that request, compared in constant time. */
  verifies(target: Target, body: Uint8Array, signature: string): boolean {
    const expected = this.#mac(target, body);
    const prefix = `${VERSION}=`;
    const given = signature.startsWith(prefix)
      ? Buffer.from(signature.slice(prefix.length), 'base64url')
      : Buffer.alloc(0);
    // timingSafeEqual needs equal lengths; a wrong length still costs one comparison.
    if (given.length !== expected.length) {
      timingSafeEqual(expected, expected);
      return false;
    }
    return timingSafeEqual(given, expected);
  }

  /** A hash of `text` only holders of the secret can compute (a plain hash of a short input can be guessed). */
  keyedHash(text: string): string {
    return createHmac('sha256', this.#hashing).update(text).digest('base64url');
  }

  #mac(target: Target, body: string | Uint8Array): Buffer {
    // Service, key and handler cannot contain a newline (Restate names and run ids), so the
    // header line is unambiguous, and the body follows it byte for byte.
    return createHmac('sha256', this.#signing)
      .update(`${VERSION}\n${target.service}\n${target.key ?? ''}\n${target.handler}\n`)
      .update(body)
      .digest();
  }
}

/** The request as a handler sees it (`ctx.request()`): enough to check its signature. */
export interface SignedRequest {
  readonly target: Target;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Uint8Array;
}

/**
 * Why `request` may not be served by workers holding `credential` (none: an open deployment),
 * or undefined when it may. A worker without a secret refuses a signed request rather than
 * serve it: its client believes the deployment protected, and must learn that it is not.
 */
export function refusalOf(
  credential: Credential | undefined,
  request: SignedRequest,
): CredentialRefusal | undefined {
  const signature = request.headers.get(SIGNATURE_HEADER);
  if (credential === undefined) return signature === undefined ? undefined : 'unexpected';
  if (signature === undefined) return 'missing';
  return credential.verifies(request.target, request.body, signature) ? undefined : 'mismatch';
}

/** The `secret` option: absent, or a string of at least MIN_SECRET_LENGTH characters. */
export function checkSecret(problems: OptionProblems, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) {
    problems.add(
      'secret',
      `must be a string of at least ${MIN_SECRET_LENGTH} random characters (e.g. the output of \`openssl rand -base64 32\`); got ${typeof value === 'string' ? `${value.length} characters` : typeof value}`,
    );
  }
}

/** The credential of a checked `secret` option, if one was given. */
export function credentialOf(secret: string | undefined): Credential | undefined {
  return secret === undefined ? undefined : new Credential(secret);
}
