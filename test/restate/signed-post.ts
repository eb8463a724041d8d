// A raw request to a deployment's ingress, signed as statecraft's clients sign theirs, for the
// tests that send what no client would (malformed bodies, foreign agent names).
import { Credential, SIGNATURE_HEADER, type Target } from '../../src/restate/credential.js';

export async function signedPost(
  deployment: {
    readonly server: { readonly url: string };
    readonly secret: string | readonly string[];
  },
  target: Target,
  body: unknown,
  options: { readonly send?: boolean } = {},
): Promise<Response> {
  const text = JSON.stringify(body);
  const key = target.key === undefined ? '' : `/${encodeURIComponent(target.key)}`;
  const path = `/${target.service}${key}/${target.handler}${options.send ? '/send' : ''}`;
  return fetch(`${deployment.server.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: new Credential(deployment.secret).sign(target, text),
    },
    body: text,
  });
}
