// What the kill -9 tests (kill-chain.test.ts, kill-loop.test.ts) and their children share: what
// a test tells its child, the lines a child writes, and the child's own plumbing. Every side
// effect appends a line to the side-effect log (appendFileSync: in the kernel before the next
// line of code, so it survives SIGKILL) and prints its progress on stdout (synchronous for a
// pipe on Linux); with `linger`, the effects take a few tens of ms, so that a kill sent on a
// progress line lands inside the effect it announced. Nothing runs on import: a child calls
// childKit() first.
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, type JournalStore, type RunDetails } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { z } from 'zod';

/** What the test tells the child (argv[2], as JSON). */
export interface ChildConfig {
  /** The fileStore's directory. */
  readonly dir: string;
  /** The side-effect log, appended to by every process of the run. */
  readonly log: string;
  /** Who this process is in the log: `A` (killed), `B` (resumes), `R` (reference run). */
  readonly proc: string;
  /** `invoke`: invoke(input, { runId, store }); `resume`: resume(runId, { store }). */
  readonly mode: 'invoke' | 'resume';
  /** Effects take their time (the workload's durations), so a kill can land inside them. */
  readonly linger: boolean;
  /** After printing its output, wait (bounded) to be killed instead of exiting. */
  readonly holdAtEnd: boolean;
}

/** One line of the side-effect log for a tool execution starting or finishing. */
export interface ToolEffectLine {
  readonly proc: string;
  readonly kind: 'tool';
  readonly phase: 'start' | 'done';
  readonly callId: string;
  readonly key: string | undefined;
}

/** Any line of the side-effect log: who wrote it, what it is about, and its phase. */
export interface AnyEffectLine {
  readonly proc: string;
  readonly kind: string;
  readonly phase: 'start' | 'done';
}

/** How a run's details() tells one tool call: replayed from the journal, re-issued, or new. */
export interface ToolCallFlags {
  readonly id: string;
  readonly replayed: boolean;
  readonly possiblyRepeated: boolean;
}

/** Printed before the child's output (JSON), its last line but one. */
export const OUTPUT_PREFIX = 'output ';
/** Printed once the run settled (after the output): where a kill lands "after end". */
export const RUN_DONE = 'run-done';

/** A child that outlives this (a test lost track of it) gives up. */
const CHILD_LIFETIME_MS = 20_000;

type WithoutProc<Line> = Line extends AnyEffectLine ? Omit<Line, 'proc'> : never;

/**
 * A child's plumbing, from its argv: its config, its progress lines, its side-effect log and
 * its pauses. `name` is the child's file name, for its messages.
 */
export function childKit<Line extends AnyEffectLine>(name: string) {
  const argument = process.argv[2];
  if (argument === undefined) throw new Error(`usage: ${name} '<ChildConfig JSON>'`);
  const config = JSON.parse(argument) as ChildConfig;

  // Never outlive a test that lost track of this process.
  setTimeout(() => {
    process.stderr.write(`${name}: still running after ${CHILD_LIFETIME_MS} ms, giving up\n`);
    process.exit(3);
  }, CHILD_LIFETIME_MS).unref();

  const progress = (line: string) => process.stdout.write(`${line}\n`);
  const effect = (line: WithoutProc<Line | ToolEffectLine>) =>
    appendFileSync(config.log, `${JSON.stringify({ proc: config.proc, ...line })}\n`);
  const linger = (ms: number) => (config.linger ? sleep(ms) : Promise.resolve());

  /** A tool with a side effect: each execution logged (id, key) as it starts and finishes. */
  const tool = (toolName: string, durationMs: (callId: string) => number) =>
    defineTool({
      name: toolName,
      description: `Records a ${toolName}.`,
      input: z.object({ value: z.string() }),
      execute: async ({ value }, { toolCallId, idempotencyKey }) => {
        effect({ kind: 'tool', phase: 'start', callId: toolCallId, key: idempotencyKey });
        progress(`tool-start ${toolCallId}`);
        await linger(durationMs(toolCallId));
        effect({ kind: 'tool', phase: 'done', callId: toolCallId, key: idempotencyKey });
        progress(`tool-done ${toolCallId}`);
        return `${toolName}:${value}`;
      },
    });

  /** Prints the run's output, then RUN_DONE; with `holdAtEnd`, waits (bounded) to be killed. */
  const finish = async (output: unknown) => {
    progress(`${OUTPUT_PREFIX}${JSON.stringify(output)}`);
    progress(RUN_DONE);
    if (config.holdAtEnd) await sleep(10_000);
  };

  return { config, progress, effect, linger, tool, finish };
}

/** The flags of a run's tool calls, in details() order. */
export function toolCallFlags(details: RunDetails): ToolCallFlags[] {
  return details.toolCalls.map((call) => ({
    id: call.call.id,
    replayed: call.replayed === true,
    possiblyRepeated: call.possiblyRepeated === true,
  }));
}

/**
 * The store appended to one entry at a time, as the run host does anyway; after each entry
 * is on disk, `after(entry)` may pause (a promise) before anything after it is written: a
 * pause between steps or rounds, before the next effect's request entry (so the effect has
 * not started).
 */
export function pacedStore(
  store: JournalStore,
  after: (entry: JournalEntry) => Promise<unknown> | undefined,
): JournalStore {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    append(runId, entry) {
      const appended = tail.then(async () => {
        await store.append(runId, entry);
        await after(entry);
      });
      tail = appended.catch(() => {});
      return appended;
    },
    read: (runId) => store.read(runId),
    list: () => store.list(),
    delete: (runId) => store.delete(runId),
  };
}

/** The type of an answer entry's event (`callModel.done`, `plan.done`…); undefined for others. */
export function answerType(entry: JournalEntry): unknown {
  return entry.type === 'answer' ? (entry.event as { type?: unknown }).type : undefined;
}
