import { type LanguageModel, ModelError } from 'statecraft';
import { collectStream } from 'statecraft/model';
import { afterEach, describe, expect, it } from 'vitest';
import { ask, PROVIDERS } from '../fuzz/provider-adapters.js';
import { type ReplayServer, startReplayServer } from '../support/replay-server.js';

// Every adapter's idle timeout (SPEC Q2), through its real SDK: an answer that stops after
// its headers fails as a retryable ModelError instead of hanging, and neither a failed nor a
// successful call leaves a timer behind (a process can exit once its calls are over).

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

async function failure(work: Promise<unknown>): Promise<ModelError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ModelError.isInstance(error)) throw new Error(`expected a ModelError, got ${String(error)}`);
  return error as ModelError;
}

describe.each(PROVIDERS)('$name idle timeout', (provider) => {
  it('aborts a generate whose body stalls after the headers, as a retryable ModelError', async () => {
    server = await startReplayServer([{ body: '', stallAfter: 0 }]);
    const model = provider.make(server.url, 150);
    const error = await failure(model.generate(ask));
    // An adapter that cannot see the body arrive bounds the whole answer instead (fromAiSdk).
    expect(error.message).toMatch(provider.stalledAnswer?.(150) ?? /idle for 150 ms/);
    expect(error.retryable).toBe(true);
  });

  it('aborts a stream that stalls after the headers, as a retryable ModelError', async () => {
    server = await startReplayServer([{ sse: [], hang: true }]);
    const model = provider.make(server.url, 150);
    const error = await failure(collectStream(model.stream(ask)));
    expect(error.message).toMatch(/idle for 150 ms/);
    expect(error.retryable).toBe(true);
  });

  it('leaves no timer behind, after a success or an idle failure', async () => {
    server = await startReplayServer([
      { json: provider.answerWithoutUsage },
      { json: provider.answerWithoutUsage },
      { sse: [provider.streamWithoutUsage] },
      { sse: [provider.streamHead], hang: true },
    ]);
    // A long timeout: a timer left armed would still be there at the end.
    const model: LanguageModel = provider.make(server.url, 60_000);
    // Warmed up first, so that the SDK's and the socket's own timers are already counted.
    await model.generate(ask);
    const before = timers();
    await model.generate(ask);
    await collectStream(model.stream(ask));
    expect(timers()).toBeLessThanOrEqual(before);
    const short = provider.make(server.url, 100);
    await failure(collectStream(short.stream(ask)));
    expect(timers()).toBeLessThanOrEqual(before);
  });
});
