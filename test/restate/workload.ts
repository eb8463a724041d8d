// The agents the Restate tests and `npm run bench:restate` run, in the test process (in
// memory, for the expected outputs) and in worker processes (on Restate). Every model call and
// tool execution appends one line to the effect log named by STATECRAFT_EFFECT_LOG, from
// whichever process runs it, so a test can count what ran twice.
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import {
  attachment,
  createChain,
  createToolLoop,
  defineTool,
  toolOutput,
  userMessage,
} from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { z } from 'zod';

export const EFFECT_LOG_ENV = 'STATECRAFT_EFFECT_LOG';
/** Milliseconds each model call and tool takes: long enough for a kill to land mid-call. */
export const EFFECT_MS_ENV = 'STATECRAFT_EFFECT_MS';
/** The test deployment's secret, as its workers get it. */
export const SECRET_ENV = 'STATECRAFT_TEST_SECRET';

export interface EffectLine {
  readonly pid: number;
  readonly kind: 'model' | 'tool';
  readonly phase: 'start' | 'done';
  /** model: a hash of its request; tool: its idempotency key `<runId>:<callId>`. */
  readonly key: string;
  /** Epoch milliseconds. */
  readonly at: number;
}

/**
 * A model call's key in the effect log: the same request, wherever and whenever it is made,
 * has the same key, and `details()` gives each call's request to compute it from.
 */
export function modelCallKey(request: {
  readonly messages: readonly unknown[];
  readonly responseFormat?: { readonly type: string };
}): string {
  const messages = JSON.stringify(request.messages);
  return `${createHash('sha256').update(messages).digest('hex').slice(0, 16)}:${request.responseFormat?.type ?? 'text'}`;
}

function logEffect(kind: EffectLine['kind'], phase: EffectLine['phase'], key: string): void {
  const file = process.env[EFFECT_LOG_ENV];
  if (!file) return;
  const line: EffectLine = { pid: process.pid, kind, phase, key, at: Date.now() };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

const effectMs = () => Number(process.env[EFFECT_MS_ENV] ?? 0);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A model whose answer is a function of the request: the same for the same run anywhere. */
function loggedModel(
  answer: (request: ModelRequest) => ScriptedTurn | Promise<ScriptedTurn>,
): ScriptedModel {
  return new ScriptedModel(async (request) => {
    const key = modelCallKey({
      messages: request.messages.toArray(),
      ...(request.responseFormat && { responseFormat: request.responseFormat }),
    });
    logEffect('model', 'start', key);
    await pause(effectMs());
    const turn = await answer(request);
    logEffect('model', 'done', key);
    return turn;
  });
}

const loggedTool = (name: string, needsApproval = false, approvalTimeoutMs?: number) =>
  defineTool({
    name,
    description: `Does ${name} for a trip.`,
    input: z.object({ n: z.number() }),
    ...(needsApproval && { needsApproval: true }),
    ...(approvalTimeoutMs !== undefined && { approvalTimeoutMs }),
    execute: async ({ n }, context) => {
      const key = context.idempotencyKey ?? `${name}:${n}`;
      logEffect('tool', 'start', key);
      await pause(effectMs());
      logEffect('tool', 'done', key);
      return `${name}-${n}`;
    },
  });

const numberIn = (request: ModelRequest): number => {
  const user = request.messages.toArray().find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : '';
  return Number(text.split(' ').at(-1)) || 0;
};

const toolOutputs = (request: ModelRequest): string =>
  request.messages
    .toArray()
    .flatMap((m) => (m.role === 'tool' ? [String(m.success ? m.output : m.error)] : []))
    .join(', ');

/** Three model calls; two tools at once, then one. Input: `trip <n>`. */
export function tripChain() {
  const model = loggedModel((request) => {
    const n = numberIn(request);
    const step = request.messages.toArray().filter((m) => m.role === 'assistant').length;
    if (step === 0) {
      return {
        toolCalls: [
          { id: `r${n}`, name: 'reserve', arguments: { n } },
          { id: `c${n}`, name: 'charge', arguments: { n } },
        ],
      };
    }
    if (step === 1) return { toolCalls: [{ id: `s${n}`, name: 'ship', arguments: { n } }] };
    return { text: `trip ${n}: ${toolOutputs(request)}` };
  });
  return createChain({
    name: 'trip',
    model,
    tools: [loggedTool('reserve'), loggedTool('charge'), loggedTool('ship')],
  });
}

/** One planned round of two commands, then the response. Input: `survey <n>`. */
export function surveyLoop() {
  const model = loggedModel((request) => {
    if (request.responseFormat?.type !== 'json_schema') {
      return { text: `survey done: ${request.messages.toArray().length} messages` };
    }
    const user = request.messages.toArray().find((m) => m.role === 'user');
    const context = JSON.parse(typeof user?.content === 'string' ? user.content : '{}') as {
      roundIndex?: number;
      userInput?: string;
    };
    const n =
      Number(
        String(context.userInput ?? '')
          .split(' ')
          .at(-1),
      ) || 0;
    if (context.roundIndex === 0) {
      const command = (purpose: string, toolName: string) => ({
        purpose,
        toolName,
        toolKwargs: { n },
      });
      return {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [command('Measure', 'measure'), command('Weigh', 'weigh')],
        }),
      };
    }
    return { text: JSON.stringify({ nextAction: 'response', executionCommands: [] }) };
  });
  return createToolLoop({
    name: 'survey',
    model,
    tools: [loggedTool('measure'), loggedTool('weigh')],
    maxRounds: 3,
  });
}

/** A refund that needs a person's approval. Input: `refund <n>`. */
export function refundChain(
  limits: { approvalTimeoutMs?: number; maxExecutionTime?: number } = {},
) {
  const model = loggedModel((request) => {
    const n = numberIn(request);
    const step = request.messages.toArray().filter((m) => m.role === 'assistant').length;
    if (step === 0) return { toolCalls: [{ id: `f${n}`, name: 'refund', arguments: { n } }] };
    return { text: `refund ${n}: ${toolOutputs(request)}` };
  });
  return createChain({
    name: 'refund',
    model,
    tools: [loggedTool('refund', true, limits.approvalTimeoutMs)],
    ...(limits.maxExecutionTime !== undefined && { maxExecutionTime: limits.maxExecutionTime }),
  });
}

/** The model asks for the same call id in two steps, each needing approval. Input: `twice <n>`. */
export function refundTwiceChain() {
  const model = loggedModel((request) => {
    const n = numberIn(request);
    const step = request.messages.toArray().filter((m) => m.role === 'assistant').length;
    if (step < 2)
      return { toolCalls: [{ id: `t${n}`, name: 'refund', arguments: { n: n + step } }] };
    return { text: `twice ${n}: ${toolOutputs(request)}` };
  });
  return createChain({ name: 'refund-twice', model, tools: [loggedTool('refund', true)] });
}

/** What the `card` tool returns: data no one without the deployment's secret may read. */
export const CARD_NUMBER = '4111 1111 1111 1111';

/**
 * Looks up a card (its number comes back from a tool), then charges it after a person's
 * approval, and answers with the number. Input: `card <n>`.
 */
export function cardChain() {
  const model = loggedModel((request) => {
    const n = numberIn(request);
    const step = request.messages.toArray().filter((m) => m.role === 'assistant').length;
    if (step === 0) return { toolCalls: [{ id: `k${n}`, name: 'card', arguments: { n } }] };
    if (step === 1) return { toolCalls: [{ id: `p${n}`, name: 'charge', arguments: { n } }] };
    return { text: `card ${n}: ${toolOutputs(request)}` };
  });
  const card = defineTool({
    name: 'card',
    description: 'Looks up the card on file.',
    input: z.object({ n: z.number() }),
    execute: () => CARD_NUMBER,
  });
  return createChain({ name: 'card', model, tools: [card, loggedTool('charge', true)] });
}

/** `size` bytes of a PNG: its signature, then bytes whose base64 no other text of a run holds. */
function png(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 167 + 29) % 253;
  return bytes;
}

/** A screenshot of 3 KB. */
export const SCREEN_BYTES = png(3072);
export const SCREEN_BASE64 = attachment({ data: SCREEN_BYTES }).data as string;
/** A screenshot of 1.5 MB, as a real one may be. */
export const LARGE_SCREEN_BYTES = png(1_500_000);

/** The input of the screen agents: `screen <n>`, with the screen's image. */
export const screenInput = (n: number, bytes: Uint8Array = SCREEN_BYTES) => ({
  messages: [userMessage(`screen ${n}`, [attachment({ data: bytes })])],
});

/** How long the slow screen agent's last model call takes: time for a test to kill its worker. */
export const SLOW_LAST_CALL_MS = 4_000;

/**
 * Takes a screenshot in each of two steps (the tool returns the input's image, named
 * `shot.png`), then answers with what the model was sent: only a model that sees the user's
 * image and both results' says `1 from the user, 2 from tools (shot.png, shot.png), the same
 * bytes`. Input: screenInput(n, bytes). `slow`: the last model call takes SLOW_LAST_CALL_MS.
 */
export function screenChain(options: { slow?: boolean; bytes?: Uint8Array } = {}) {
  const bytes = options.bytes ?? SCREEN_BYTES;
  const base64 = attachment({ data: bytes }).data;
  const model = loggedModel(async (request) => {
    const n = numberIn(request);
    const messages = request.messages.toArray();
    const step = messages.filter((m) => m.role === 'assistant').length;
    if (step < 2) {
      return { toolCalls: [{ id: `shot${n}-${step}`, name: 'screenshot', arguments: { n } }] };
    }
    if (options.slow) await pause(SLOW_LAST_CALL_MS);
    const fromUser = messages.flatMap((m) => (m.role === 'user' ? (m.attachments ?? []) : []));
    const fromTools = messages.flatMap((m) => (m.role === 'tool' ? (m.attachments ?? []) : []));
    const same = [...fromUser, ...fromTools].every((a) => a.data === base64);
    const names = fromTools.map((a) => a.name).join(', ');
    return {
      text: `screen ${n}: ${fromUser.length} from the user, ${fromTools.length} from tools (${names}), ${same ? 'the same bytes' : 'other bytes'}`,
    };
  });
  const screenshot = defineTool({
    name: 'screenshot',
    description: 'Takes a screenshot.',
    input: z.object({ n: z.number() }),
    execute: async ({ n }, context) => {
      const key = context.idempotencyKey ?? `screenshot:${n}`;
      logEffect('tool', 'start', key);
      await pause(effectMs());
      logEffect('tool', 'done', key);
      return toolOutput({ taken: n }, [attachment({ data: bytes, name: 'shot.png' })]);
    },
  });
  return createChain({ name: 'screen', model, tools: [screenshot] });
}

/** Every agent a test worker serves, by name. */
export function workloadAgents() {
  return {
    trip: tripChain(),
    survey: surveyLoop(),
    refund: refundChain(),
    'refund-deadline': refundChain({ approvalTimeoutMs: 3_000 }),
    'refund-limited': refundChain({ maxExecutionTime: 2_000 }),
    'refund-twice': refundTwiceChain(),
    card: cardChain(),
    screen: screenChain(),
    'screen-slow': screenChain({ slow: true }),
    'screen-large': screenChain({ bytes: LARGE_SCREEN_BYTES }),
  };
}

/** The input of run `i` for `agent`. */
export function inputOf(agent: 'trip' | 'survey', i: number): string {
  return `${agent} ${i}`;
}
