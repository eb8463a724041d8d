import type { ChainRunInput } from '../chain/run-types.js';
import { ConfigError } from '../errors.js';
import { assistantMessage, type Message, userMessage } from '../messages.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { satisfies } from '../options/kinds.js';
import { createRunnable, runnable } from './create-runnable.js';
import type { Runnable, RunnableLike } from './types.js';

// SPEC R3 memory, as LangChain's Chain has it: loaded before a run (its messages come before
// the run's own), saved after a successful one (the run's input and its final answer). A
// failed run saves nothing: the next run should not build on an answer that was never given.

/** One finished exchange: what the run was asked and what it answered. */
export interface MemoryTurn {
  readonly input: readonly Message[];
  readonly output: readonly Message[];
}

export interface Memory {
  /** The conversation so far for `sessionId`, oldest first. */
  load(
    sessionId: string,
    options: { readonly signal?: AbortSignal },
  ): Promise<readonly Message[]> | readonly Message[];
  save(
    sessionId: string,
    turn: MemoryTurn,
    options: { readonly signal?: AbortSignal },
  ): Promise<void> | void;
}

export interface InMemoryChatMemoryOptions {
  /** Keep at most this many messages per session, dropping whole turns from the oldest. */
  readonly maxMessages?: number;
}

/** InMemoryChatMemory's options described once (see src/options/describe.ts). */
export const MEMORY_OPTIONS = describeOptions('new InMemoryChatMemory', {
  maxMessages: satisfies<number>(
    (value) => Number.isInteger(value) && (value as number) > 0,
    (value) => `must be an integer > 0; got ${String(value)}`,
    { defaultText: 'none (every message)' },
  ),
});

// tsc fails here, naming the option, when InMemoryChatMemoryOptions and its description drift.
const _described: Describes<InMemoryChatMemoryOptions, typeof MEMORY_OPTIONS> = true;

/** A Memory in this process's heap, per session: for tests, scripts and single-process apps. */
export class InMemoryChatMemory implements Memory {
  readonly #sessions = new Map<string, MemoryTurn[]>();
  readonly #maxMessages: number | undefined;

  constructor(options: InMemoryChatMemoryOptions = {}) {
    if (typeof options !== 'object' || options === null) {
      throw new ConfigError('options', 'new InMemoryChatMemory takes an options object or nothing');
    }
    this.#maxMessages = MEMORY_OPTIONS.parse(options).maxMessages;
  }

  load(sessionId: string): readonly Message[] {
    return this.messages(sessionId);
  }

  save(sessionId: string, turn: MemoryTurn): void {
    const turns = [...(this.#sessions.get(sessionId) ?? []), turn];
    // Whole turns go, so the history never starts with an answer to a question it lost.
    const max = this.#maxMessages;
    while (max !== undefined && turns.length > 1 && size(turns) > max) turns.shift();
    this.#sessions.set(sessionId, turns);
  }

  /** The session's messages, oldest first. */
  messages(sessionId = 'default'): readonly Message[] {
    return (this.#sessions.get(sessionId) ?? []).flatMap((turn) => [...turn.input, ...turn.output]);
  }

  clear(sessionId?: string): void {
    if (sessionId === undefined) this.#sessions.clear();
    else this.#sessions.delete(sessionId);
  }
}

function size(turns: readonly MemoryTurn[]): number {
  return turns.reduce((sum, turn) => sum + turn.input.length + turn.output.length, 0);
}

/**
 * A chain (or any step taking chain input and answering with `text`) with memory: the
 * session's messages are loaded into its input, and its input and answer saved after it
 * succeeds. The session is `config.sessionId`, `'default'` when absent.
 */
export function withMemory<O extends { readonly text: string }>(
  step: RunnableLike<string | ChainRunInput, O>,
  memory: Memory,
): Runnable<string | ChainRunInput, O> {
  if (
    typeof memory !== 'object' ||
    memory === null ||
    typeof memory.load !== 'function' ||
    typeof memory.save !== 'function'
  ) {
    throw new ConfigError('memory', 'must implement load(sessionId) and save(sessionId, turn)');
  }
  const inner = runnable(step);
  return createRunnable<string | ChainRunInput, O>({
    name: `${inner.name} (with memory)`,
    kind: 'memory',
    run: async (input, context) => {
      const { signal, sessionId = 'default' } = context.config;
      const options = signal ? { signal } : {};
      const runInput = typeof input === 'string' ? { messages: [userMessage(input)] } : input;
      // System messages stay first; the history goes between them and the new messages.
      const lead = runInput.messages.findIndex((message) => message.role !== 'system');
      const split = lead === -1 ? runInput.messages.length : lead;
      const system = runInput.messages.slice(0, split);
      const fresh = runInput.messages.slice(split);
      const history = await memory.load(sessionId, options);
      const output = await context.call(inner, {
        ...runInput,
        messages: [...system, ...history, ...fresh],
      });
      await memory.save(
        sessionId,
        { input: fresh, output: [assistantMessage(output.text)] },
        options,
      );
      return output;
    },
  });
}
