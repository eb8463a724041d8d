// SPEC Q4 for the factories besides createChain and createToolLoop: each refuses unknown
// options (naming the nearest known one) and reports every bad option in one ConfigError.
// Before issue 13 (defect 10) a misspelled option was silently ignored, and only the first
// bad one was reported.
import { trace } from '@opentelemetry/api';
import { ConfigError, fromFunction, InMemoryChatMemory } from 'statecraft';
import { instrument, otelObserver } from 'statecraft/otel';
import { describe, expect, it } from 'vitest';
import { startViewer } from '../../src/viewer/server.js';
import { thrownBy } from '../support/errors.js';

const tracer = trace.getTracer('factory-options-test');

/** The ConfigError `fn` throws; fails the test otherwise. */
function configErrorOf(fn: () => unknown): ConfigError {
  return thrownBy(ConfigError, fn);
}

/** The options of the ConfigError `fn` throws, in order. */
function problemsOf(fn: () => unknown): string[] {
  return configErrorOf(fn).problems.map((p) => p.option);
}

/** The ConfigError a promise rejects with; fails the test otherwise. */
async function rejectionOf(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ConfigError.isInstance(error)) throw new Error(`expected a ConfigError, got ${error}`);
  return error;
}

describe('startViewer', () => {
  it('refuses a misspelled option, naming the nearest known one', async () => {
    const error = await rejectionOf(startViewer({ prot: 0 } as never));
    expect(error.message).toBe(
      'Invalid option `prot`: is not an option of startViewer; did you mean `port`?',
    );
  });

  it('reports every bad option in one ConfigError', async () => {
    const error = await rejectionOf(
      startViewer({ port: -1, host: '0.0.0.0', keepRuns: 0, keepRun: 5 } as never),
    );
    expect(error.problems.map((p) => p.option)).toEqual(['keepRun', 'port', 'host', 'keepRuns']);
    expect(error.message).toContain('4 invalid options for startViewer');
    expect(error.message).toContain('`port`: expected an integer from 0 to 65535, got -1');
    expect(error.message).toContain('`host`: the viewer listens on 127.0.0.1 only');
  });

  it('accepts every option', async () => {
    const viewer = await startViewer({ port: 0, host: '127.0.0.1', keepRuns: 5 });
    await viewer.close();
  });
});

describe('otelObserver and instrument', () => {
  it('refuses a misspelled option, naming the nearest known one', () => {
    const error = configErrorOf(() => otelObserver({ captureContents: true } as never));
    expect(error.message).toBe(
      'Invalid option `captureContents`: is not an option of otelObserver; did you mean `captureContent`?',
    );
    // instrument() takes the same options: refused before it registers anything.
    expect(problemsOf(() => instrument({ tracr: tracer } as never))).toEqual(['tracr']);
  });

  it('reports every bad option in one ConfigError', () => {
    const error = configErrorOf(() =>
      otelObserver({ tracer: {}, captureContent: 'yes', sampler: 1 } as never),
    );
    expect(error.problems.map((p) => p.option)).toEqual(['sampler', 'tracer', 'captureContent']);
    expect(error.message).toContain('3 invalid options for otelObserver');
  });

  it('accepts every option', () => {
    expect(() => otelObserver({ tracer, captureContent: true })).not.toThrow();
  });
});

describe('new InMemoryChatMemory', () => {
  it('refuses a misspelled option, naming the nearest known one', () => {
    const error = configErrorOf(() => new InMemoryChatMemory({ maxMessage: 4 } as never));
    expect(error.message).toBe(
      'Invalid option `maxMessage`: is not an option of new InMemoryChatMemory; did you mean `maxMessages`?',
    );
  });

  it('reports every bad option in one ConfigError', () => {
    expect(
      problemsOf(() => new InMemoryChatMemory({ maxMessages: 0, sessions: 2 } as never)),
    ).toEqual(['sessions', 'maxMessages']);
  });

  it('accepts every option', () => {
    expect(() => new InMemoryChatMemory({ maxMessages: 4 })).not.toThrow();
  });
});

describe('withRetry', () => {
  const step = fromFunction((n: number) => n);

  it('refuses a misspelled option, naming the nearest known one', () => {
    const error = configErrorOf(() => step.withRetry({ maxAttempt: 2 } as never));
    expect(error.message).toBe(
      'Invalid option `maxAttempt`: is not an option of withRetry; did you mean `maxAttempts`?',
    );
    expect(problemsOf(() => step.withRetry({ retries: 2 } as never))).toEqual(['retries']);
  });

  it('reports every bad option in one ConfigError', () => {
    const error = configErrorOf(() =>
      step.withRetry({ maxAttempts: 0, shouldRetry: true, delayMs: -1, delay: 5 } as never),
    );
    expect(error.problems.map((p) => p.option)).toEqual([
      'delay',
      'maxAttempts',
      'shouldRetry',
      'delayMs',
    ]);
    expect(error.message).toContain('4 invalid options for withRetry');
  });

  it('accepts every option', async () => {
    const retried = step.withRetry({ maxAttempts: 2, shouldRetry: () => true, delayMs: 0 });
    expect(await retried.invoke(3)).toBe(3);
  });
});
