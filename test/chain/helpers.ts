// Shared helpers for the chain scenario tests (SPEC C). Only public API is used.
import {
  type ChainPartialResult,
  type ChainStreamEvent,
  defineTool,
  type Message,
  type StatecraftError,
} from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { z } from 'zod';

/** The error of the given class a promise rejects with; fails the test otherwise. */
export async function rejectionOf<E>(
  errorClass: { isInstance(value: unknown): value is E; name: string },
  promise: Promise<unknown>,
): Promise<E> {
  try {
    await promise;
  } catch (error) {
    if (errorClass.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`expected a ${errorClass.name}, but the promise resolved`);
}

/** The partial run a fatal chain error carries, with the chain's extra fields. */
export function partialOf(error: StatecraftError): ChainPartialResult {
  const partial = error.partial as ChainPartialResult | undefined;
  if (!partial) throw new Error(`${error.name} carries no partial result`);
  return partial;
}

/** The messages of a recorded model request, as an array. */
export function messagesOf(request: ModelRequest | undefined): Message[] {
  if (!request) throw new Error('no such request was recorded');
  return request.messages.toArray();
}

export function rolesOf(messages: readonly Message[]): string[] {
  return messages.map((m) => m.role);
}

/** Contents of the system messages after the leading one (notes, warnings, corrections). */
export function systemNotes(messages: readonly Message[]): string[] {
  return messages
    .slice(1)
    .filter((m) => m.role === 'system')
    .map((m) => (m as { content: string }).content);
}

export function toolMessages(messages: readonly Message[]) {
  return messages.flatMap((m) => (m.role === 'tool' ? [m] : []));
}

/** Every event of a chain stream, and the error it ended with, if any. */
export async function drain(
  stream: AsyncIterable<ChainStreamEvent>,
): Promise<{ events: ChainStreamEvent[]; error: unknown }> {
  const events: ChainStreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

/** Resolves with the promise's outcome, or with 'hung' after `ms` (so a hang fails, not times out). */
export async function within<T>(
  ms: number,
  promise: Promise<T>,
): Promise<{ settled: 'resolved'; value: T } | { settled: 'rejected'; error: unknown } | 'hung'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ settled: 'resolved' as const, value }),
        (error: unknown) => ({ settled: 'rejected' as const, error }),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise with its resolve function, for tools the test releases by hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves once `signal` aborts; never otherwise. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

export const multiply = defineTool({
  name: 'multiply',
  description: 'Multiplies two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a * b,
});
