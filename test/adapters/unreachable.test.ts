// A provider that cannot be reached, through the real SDKs: the error is one line that names
// the URL the client used and why it could not get there, and keeps the SDK's error as its
// cause. Only 127.0.0.1: a port that was just closed (refused) and a plain HTTP server spoken
// to over TLS (the handshake fails).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LanguageModel, ModelError, Transcript, userMessage } from 'statecraft';
import { AnthropicModel } from 'statecraft/anthropic';
import { GeminiModel } from 'statecraft/gemini';
import { OpenAIChatModel, OpenAIResponsesModel } from 'statecraft/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkCause, networkFailureMessage } from '../../src/model/network-error.js';

// No retries: each SDK would otherwise back off and try the closed port again.
const MODELS: readonly { readonly name: string; readonly at: (url: string) => LanguageModel }[] = [
  {
    name: 'OpenAIChatModel',
    at: (baseURL) => new OpenAIChatModel({ model: 'm', apiKey: 'k', baseURL, maxRetries: 0 }),
  },
  {
    name: 'OpenAIResponsesModel',
    at: (baseURL) => new OpenAIResponsesModel({ model: 'm', apiKey: 'k', baseURL, maxRetries: 0 }),
  },
  {
    name: 'AnthropicModel',
    at: (baseURL) => new AnthropicModel({ model: 'm', apiKey: 'k', baseURL, maxRetries: 0 }),
  },
  {
    name: 'GeminiModel',
    at: (baseUrl) => new GeminiModel({ model: 'm', apiKey: 'k', baseUrl, retries: 0 }),
  },
];

const request = { messages: Transcript.from([userMessage('Hi')]) };

let closedPort: number;
let plainHttp: Server;
let plainPort: number;

beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  plainHttp = createServer((_req, res) => res.end('not TLS'));
  await new Promise<void>((resolve) => plainHttp.listen(0, '127.0.0.1', resolve));
  plainPort = (plainHttp.address() as AddressInfo).port;
});

afterAll(async () => {
  plainHttp.closeAllConnections();
  await new Promise((resolve) => plainHttp.close(resolve));
});

async function failure(model: LanguageModel, how: 'generate' | 'stream'): Promise<ModelError> {
  try {
    if (how === 'generate') await model.generate(request);
    else for await (const _part of model.stream(request));
  } catch (error) {
    expect(ModelError.isInstance(error)).toBe(true);
    return error as ModelError;
  }
  throw new Error('expected the call to fail');
}

describe.each(MODELS)('$name', ({ at }) => {
  it.each(['generate', 'stream'] as const)(
    '%s: a closed port is one line naming the URL and "connection refused"',
    async (how) => {
      const url = `http://127.0.0.1:${closedPort}/v1`;
      const error = await failure(at(url), how);
      expect(error.message).toBe(`could not reach ${url} (connection refused)`);
      expect(error.retryable).toBe(true);
      // The SDK's own error stays reachable for whoever wants the details.
      expect(error.cause).toBeInstanceOf(Error);
    },
  );

  it("a port fetch blocks (9, say) is named as such, not as the SDK's words", async () => {
    const url = 'http://127.0.0.1:9/v1';
    const error = await failure(at(url), 'generate');
    expect(error.message).toBe(`could not reach ${url} (port blocked by fetch)`);
  });

  it('a TLS client talking to a plain HTTP server names the TLS failure', async () => {
    const url = `https://127.0.0.1:${plainPort}/v1`;
    const error = await failure(at(url), 'generate');
    expect(error.message).toMatch(
      new RegExp(
        `^could not reach ${url.replace(/[.]/g, '\\.')} \\(TLS: [^\\n]+ \\(ERR_SSL_\\w+\\)\\)$`,
      ),
    );
  });
});

describe('the cause in a few words', () => {
  const coded = (code: string, message = code) =>
    new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });

  it.each([
    ['ENOTFOUND', 'host not found'],
    ['EAI_AGAIN', 'host name lookup failed, try again'],
    ['ECONNRESET', 'connection reset'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connection timed out'],
    ['EHOSTUNREACH', 'host unreachable'],
  ])('%s: %s', (code, words) => {
    expect(networkCause(coded(code))).toBe(words);
  });

  it("a certificate problem keeps Node's words and code", () => {
    expect(networkCause(coded('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'))).toBe(
      'TLS: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)',
    );
  });

  it('a timeout by name, and an unknown failure by the first line of its message', () => {
    const timeout = Object.assign(new Error('Request timed out.'), {
      name: 'APIConnectionTimeoutError',
    });
    expect(networkFailureMessage('OpenAI', 'https://api.openai.com/v1', timeout)).toBe(
      'could not reach https://api.openai.com/v1 (timed out)',
    );
    expect(networkFailureMessage('OpenAI', undefined, new Error('odd\nsecond line'))).toBe(
      'could not reach the OpenAI API (odd)',
    );
  });

  it('never prints credentials or a query from the URL', () => {
    const message = networkFailureMessage(
      'Gemini',
      'https://user:secret@proxy.example/v1?key=sk-123',
      coded('ECONNREFUSED'),
    );
    expect(message).toBe('could not reach https://proxy.example/v1 (connection refused)');
  });
});
