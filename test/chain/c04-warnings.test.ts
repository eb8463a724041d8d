// SPEC C4: warningPrompt + warningThreshold. A threshold >= 0 is absolute, a negative one is
// "this far from the limit"; each warning is inserted once, as a system message before the
// next model call.
import { ConfigError, createChain, defineTool, type Message, systemMessage } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';
import { messagesOf } from './helpers.js';

const ping = defineTool({
  name: 'ping',
  description: 'Answers pong.',
  input: z.object({ n: z.number() }),
  execute: () => 'pong',
});

/** Calls `ping` for `toolTurns` generations, then answers; each call spends `tokens`. */
function model(toolTurns: number, tokens = 10) {
  return new ScriptedModel([
    ...Array.from({ length: toolTurns }, (_, i) => ({
      toolCalls: [{ name: 'ping', arguments: { n: i } }],
      usage: { inputTokens: tokens, outputTokens: 0 },
    })),
    { text: 'done', usage: { inputTokens: tokens, outputTokens: 0 } },
  ]);
}

const count = (messages: readonly Message[], text: string) =>
  messages.filter((m) => m.role === 'system' && m.content === text).length;

/** For each model call: how many times the warning text is in its request. */
function warningsPerRequest(scripted: ScriptedModel, text: string): number[] {
  return scripted.requests.map((request) => count(messagesOf(request), text));
}

describe('iteration warnings (C4)', () => {
  it('an absolute threshold warns once the generation count reaches it', async () => {
    const scripted = model(4);
    const run = await createChain({
      model: scripted,
      tools: [ping],
      maxIterations: 6,
      warningPrompt: { iterations: 'Few iterations left.' },
      warningThreshold: { iterations: 2 },
    }).invoke('go');

    // After 2 generations the warning precedes the 3rd call, and is never inserted again.
    expect(warningsPerRequest(scripted, 'Few iterations left.')).toEqual([0, 0, 1, 1, 1]);
    // Placed as the last message before the call: after the step's tool result.
    expect(messagesOf(scripted.requests[2]).at(-1)).toEqual(systemMessage('Few iterations left.'));
    expect(messagesOf(scripted.requests[2]).at(-2)?.role).toBe('tool');
    expect(count(run.transcript, 'Few iterations left.')).toBe(1);
  });

  it('a negative threshold warns that far from the limit', async () => {
    const scripted = model(4);
    await createChain({
      model: scripted,
      tools: [ping],
      maxIterations: 5,
      warningPrompt: { iterations: 'Two generations left.' },
      warningThreshold: { iterations: -2 },
    }).invoke('go');
    // 5 - 2 = 3: warned once 3 generations are done, i.e. before the 4th call.
    expect(warningsPerRequest(scripted, 'Two generations left.')).toEqual([0, 0, 0, 1, 1]);
  });

  it('a threshold of 0 warns before the very first call', async () => {
    const scripted = model(1);
    await createChain({
      model: scripted,
      tools: [ping],
      warningPrompt: { iterations: 'Be quick.' },
      warningThreshold: { iterations: 0 },
    }).invoke('go');
    expect(warningsPerRequest(scripted, 'Be quick.')).toEqual([1, 1]);
    // The tool principles' system prompt leads; the warning follows the user's message.
    expect(messagesOf(scripted.requests[0]).map((m) => m.role)).toEqual([
      'system',
      'user',
      'system',
    ]);
    expect(messagesOf(scripted.requests[0]).at(-1)).toEqual(systemMessage('Be quick.'));
  });

  it('never warns when the run ends before the threshold', async () => {
    const scripted = model(1);
    const run = await createChain({
      model: scripted,
      tools: [ping],
      warningPrompt: { iterations: 'Late.' },
      warningThreshold: { iterations: 5 },
    }).invoke('go');
    expect(warningsPerRequest(scripted, 'Late.')).toEqual([0, 0]);
    expect(count(run.transcript, 'Late.')).toBe(0);
  });
});

describe('token warnings (C4)', () => {
  it('an absolute threshold warns once cumulative usage reaches it', async () => {
    const scripted = model(3, 30);
    const run = await createChain({
      model: scripted,
      tools: [ping],
      warningPrompt: { tokens: 'Token budget is running low.' },
      warningThreshold: { tokens: 60 },
    }).invoke('go');
    // 30, 60 → warned before the 3rd call.
    expect(warningsPerRequest(scripted, 'Token budget is running low.')).toEqual([0, 0, 1, 1]);
    expect(count(run.transcript, 'Token budget is running low.')).toBe(1);
  });

  it('a negative threshold warns that many tokens before maxTokens', async () => {
    const scripted = model(4, 30);
    await createChain({
      model: scripted,
      tools: [ping],
      maxTokens: 200,
      warningPrompt: { tokens: 'Close to the token limit.' },
      warningThreshold: { tokens: -110 },
    }).invoke('go');
    // 200 - 110 = 90: reached after 3 calls (30, 60, 90), so the 4th call is warned.
    expect(warningsPerRequest(scripted, 'Close to the token limit.')).toEqual([0, 0, 0, 1, 1]);
  });

  it('inserts both warnings, each once, when both thresholds are reached', async () => {
    const scripted = model(3, 30);
    await createChain({
      model: scripted,
      tools: [ping],
      warningPrompt: { iterations: 'ITER', tokens: 'TOKENS' },
      warningThreshold: { iterations: 1, tokens: 60 },
    }).invoke('go');
    expect(warningsPerRequest(scripted, 'ITER')).toEqual([0, 1, 1, 1]);
    expect(warningsPerRequest(scripted, 'TOKENS')).toEqual([0, 0, 1, 1]);
  });
});

describe('warning configuration (C4)', () => {
  const scripted = new ScriptedModel([]);

  it('a prompt without a threshold is a ConfigError naming the threshold', () => {
    const error = thrownBy(ConfigError, () =>
      createChain({ model: scripted, warningPrompt: { iterations: 'Hurry.' } }),
    );
    expect(error.option).toBe('warningThreshold.iterations');
    const tokens = thrownBy(ConfigError, () =>
      createChain({ model: scripted, warningPrompt: { tokens: 'Hurry.' } }),
    );
    expect(tokens.option).toBe('warningThreshold.tokens');
  });

  it('a threshold without a prompt is a ConfigError naming the prompt', () => {
    const error = thrownBy(ConfigError, () =>
      createChain({ model: scripted, warningThreshold: { tokens: -100 } }),
    );
    expect(error.option).toBe('warningPrompt.tokens');
  });

  it('a blank prompt or a non-finite threshold is rejected', () => {
    expect(
      thrownBy(ConfigError, () =>
        createChain({
          model: scripted,
          warningPrompt: { iterations: '  ' },
          warningThreshold: { iterations: 1 },
        }),
      ).option,
    ).toBe('warningPrompt.iterations');
    expect(
      thrownBy(ConfigError, () =>
        createChain({
          model: scripted,
          warningPrompt: { iterations: 'x' },
          warningThreshold: { iterations: Number.NaN },
        }),
      ).option,
    ).toBe('warningThreshold.iterations');
  });
});
