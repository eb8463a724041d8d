// What the two OpenAI integration suites share: the weather tool their recorded fixtures call,
// the call ids and answer in those fixtures, the replay server per test, and small helpers.
import { defineTool, Transcript, userMessage } from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { afterEach, vi } from 'vitest';
import { z } from 'zod';
import {
  fixture,
  jsonFixture,
  type ReplayResponse,
  type ReplayServer,
  ssePieces,
  startReplayServer,
} from '../support/replay-server.js';

export const ANSWER = 'Paris is 18 °C and sunny, London 15 °C with light rain, and Berlin 21 °C.';
export const PARIS = 'call_8kQ2XbV7tLmN3pRz1wYc5dHe';
export const LONDON = 'call_Jf4sT9qWn2XvB6mLk0pZr8Ya';
export const BERLIN = 'call_Rm3vK8nQ2pXz7LbW5sTy1dFg';

const TEMPERATURES: Record<string, number> = { Paris: 18, London: 15, Berlin: 21 };

/** The fixtures' `get_weather` tool, its calls counted. */
export function weatherTool() {
  const execute = vi.fn(({ city }: { city: string }) => ({ city, tempC: TEMPERATURES[city] }));
  const tool = defineTool({
    name: 'get_weather',
    description: 'Current weather for a city.',
    input: z.object({ city: z.string() }),
    execute,
  });
  return { tool, execute };
}

/** One replay server per test, closed after it. */
export function useReplayServer(): (responses: ReplayResponse[]) => Promise<ReplayServer> {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (responses) => {
    server = await startReplayServer(responses);
    return server;
  };
}

export const json = (name: string): ReplayResponse => ({ json: jsonFixture('openai', name) });
export const sse = (name: string): ReplayResponse => ({
  sse: ssePieces(fixture('openai', name)),
});

export const request = (text = 'Weather in Paris?'): ModelRequest => ({
  messages: Transcript.from([userMessage(text)]),
});

/** What a promise rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}
