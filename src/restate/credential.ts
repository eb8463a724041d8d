import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { OptionContext, OptionSpec } from '../options/describe.js';

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

/** The keys one secret gives: to sign requests, to seal what Restate keeps, to key hashes. */
interface Keys {
  readonly signing: Buffer;
  readonly sealing: Buffer;
  readonly hashing: Buffer;
}

function keysOf(secret: string): Keys {
  // HKDF: none of the three keys can be worked out from another.
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', secret, 'statecraft/restate', purpose, 32));
  return {
    signing: derive(`request signature ${VERSION}`),
    sealing: derive(`sealing ${VERSION}`),
    hashing: derive(`keyed hash ${VERSION}`),
  };
}

/**
 * A deployment's credential: one secret, or, while it is being replaced, several. The first
 * signs requests, seals and keys hashes; every one is accepted to check a request's signature
 * and to open what it sealed. Rotating: give everyone `[old, new]`, then `[new, old]`, then,
 * once nothing sealed with the old one is needed any more, `new`.
 */
export class Credential {
  readonly #keys: readonly Keys[];

  constructor(secrets: string | readonly string[]) {
    this.#keys = (typeof secrets === 'string' ? [secrets] : secrets).map(keysOf);
    if (this.#keys.length === 0) throw new TypeError('Credential: no secret');
  }

  get #current(): Keys {
    return this.#keys[0] as Keys;
  }

  /** The key this credential seals with. */
  get sealingKey(): Buffer {
    return this.#current.sealing;
  }

  /** Every key a sealed text may have been sealed with, the current one first. */
  get openingKeys(): readonly Buffer[] {
    return this.#keys.map((keys) => keys.sealing);
  }

  /** The signature header's value for a request of `body` (the exact text sent) to `target`. */
  sign(target: Target, body: string | Uint8Array): string {
    return `${VERSION}=${mac(this.#current.signing, target, body).toString('base64url')}`;
  }

  /** Whether `signature` is that request's under one of the secrets, compared in constant time. */
  verifies(target: Target, body: Uint8Array, signature: string): boolean {
    const prefix = `${VERSION}=`;
    const given = signature.startsWith(prefix)
      ? Buffer.from(signature.slice(prefix.length), 'base64url')
      : Buffer.alloc(0);
    let verified = false;
    for (const keys of this.#keys) {
      const expected = mac(keys.signing, target, body);
      // timingSafeEqual needs equal lengths: one of another length is compared all the same
      // (with the expected value itself), so that it takes as long, and then refused.
      const compared = given.length === expected.length ? given : expected;
      const equal = timingSafeEqual(compared, expected);
      verified ||= equal && compared === given;
    }
    return verified;
  }

  /** A hash of `text` only holders of the secret can compute (a plain hash of a short input can be guessed). */
  keyedHash(text: string): string {
    return this.keyedHashes(text)[0] as string;
  }

  /** `text`'s keyed hash under each secret, the current one first. */
  keyedHashes(text: string): string[] {
    return this.#keys.map((keys) =>
      createHmac('sha256', keys.hashing).update(text).digest('base64url'),
    );
  }
}

function mac(key: Buffer, target: Target, body: string | Uint8Array): Buffer {
  // Service, key and handler cannot contain a newline (Restate names and run ids), so the
  // header line is unambiguous, and the body follows it byte for byte.
  return createHmac('sha256', key)
    .update(`${VERSION}\n${target.service}\n${target.key ?? ''}\n${target.handler}\n`)
    .update(body)
    .digest();
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

/**
 * The `secret` option: a string of at least MIN_SECRET_LENGTH characters, or, during a
 * rotation, a non-empty list of different such strings (see Credential).
 */
export const SECRET: OptionSpec<string | readonly string[]> = {
  defaultText: 'none (this machine only)',
  check: (value: unknown, at: OptionContext) => {
    const secrets = Array.isArray(value) ? (value as unknown[]) : [value];
    const weak = secrets.find(
      (secret) => typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH,
    );
    if (secrets.length === 0 || weak !== undefined || new Set(secrets).size !== secrets.length) {
      at.problem(
        `must be a string of at least ${MIN_SECRET_LENGTH} random characters (e.g. the output of \`openssl rand -base64 32\`), or a list of different ones while it is replaced; got ${describe(value, weak)}`,
      );
      return undefined;
    }
    return value as string | readonly string[];
  },
};

function describe(value: unknown, weak: unknown): string {
  if (Array.isArray(value) && value.length === 0) return 'an empty list';
  if (weak === undefined) return 'the same secret twice';
  return typeof weak === 'string' ? `${weak.length} characters` : typeof weak;
}

/** The credential of a checked `secret` option, if one was given. */
export function credentialOf(
  secret: string | readonly string[] | undefined,
): Credential | undefined {
  return secret === undefined ? undefined : new Credential(secret);
}
