import type { CrashCase } from './crash.js';
import type { ChainScenario, LoopScenario, ToolData, TurnData } from './scenario.js';

// Crash mode's counterexamples, shrunk by hand from what `npm run fuzz -- --crash` found: each
// broke an invariant because of a bug in src/. Kept as regression tests (fuzz.test.ts): one
// whose bug is open fails until it is fixed. Each reproduces on every run (no race: a tool
// that waits for its signal, a fixed abort).

const waitsForSignal: ToolData = {
  behaviour: 'hang',
  value: null,
  delayMs: 0,
  items: 0,
  duplicateCallWarn: false,
  returnDirect: false,
};

const answer: TurnData = {
  answer: { kind: 'text', text: 'answer' },
  latencyMs: 0,
  chunkDelayMs: 0,
  usage: 'default',
};

const callsTool0: TurnData = {
  ...answer,
  answer: { kind: 'calls', calls: [{ target: 0, args: 'valid', n: 0, withId: true }] },
};

export interface Counterexample {
  readonly name: string;
  readonly crashCase: CrashCase;
}

export const CRASH_COUNTEREXAMPLES: readonly Counterexample[] = [
  {
    // The abort ends the run (its `end` entry is written), then disposing of the run aborts
    // the tool, whose failed result is journaled after `end`: the store lists the run as
    // running, and resuming the ended run is a JournalMismatchError.
    name: "journal-ends: a chain aborted with a tool call in flight journals the call's result after `end`",
    crashCase: {
      scenario: {
        kind: 'chain',
        tools: [waitsForSignal],
        turns: [callsTool0],
        options: {
          structured: 'none',
          validate: 'none',
          hooks: 'none',
          invalidToolCall: 'default',
        },
        abortAtMs: 10,
        via: 'invoke',
      } satisfies ChainScenario,
      crash: 0,
    },
  },
  {
    // The same in a tool loop, ended by its timeout.
    name: "journal-ends: a tool loop timing out with a tool call in flight journals the call's result after `end`",
    crashCase: {
      scenario: {
        kind: 'loop',
        tools: [waitsForSignal],
        planner: 'function',
        plans: [
          {
            plan: {
              kind: 'plan',
              action: 'execute',
              listKey: 'executionCommands',
              commands: [{ target: 0, args: 'valid' }],
            },
            form: 'object',
            latencyMs: 0,
            usage: 'default',
          },
        ],
        respond: 'none',
        response: answer,
        options: { timeout: 10 },
        abortAtMs: 30,
        via: 'invoke',
      } satisfies LoopScenario,
      crash: 0,
    },
  },
  {
    // Resuming (or attaching to) a run that has ended, with a signal already aborted, journals
    // an `abort` entry after `end`: the store lists the run as running again.
    name: 'journal-ends: resuming an ended run with an aborted signal journals `abort` after `end`',
    crashCase: {
      scenario: {
        kind: 'chain',
        tools: [],
        turns: [],
        options: {
          structured: 'none',
          validate: 'none',
          hooks: 'none',
          invalidToolCall: 'default',
        },
        abortAtMs: -1,
        via: 'invoke',
      } satisfies ChainScenario,
      crash: 1000,
    },
  },
  {
    // A resumed tool loop's details() left out the model calls answered from the journal
    // while its usage counted them (the chain recorded them). Fixed in src/ while crash mode
    // was written (create-tool-loop.ts, recordReplayedModelCall): passes since.
    name: "usage-adds-up (fixed): a resumed tool loop's details() lists the model calls answered from the journal",
    crashCase: {
      scenario: {
        kind: 'loop',
        tools: [],
        planner: 'model',
        plans: [],
        respond: 'model',
        response: answer,
        options: { instant: false },
        via: 'invoke',
      } satisfies LoopScenario,
      crash: 1000,
    },
  },
  {
    // An abort while a call waits for approval (SPEC H2): the gate let the waiting call go
    // with a "not approved" result, which was journaled after the `abort` entry; a resume then
    // ended before reaching it, a JournalMismatchError. Found by `npm run fuzz -- --crash
    // --seed 44 --only chain` (run 235).
    name: 'journal-sound: an abort while a call waits for approval journals nothing for that call',
    crashCase: {
      scenario: {
        kind: 'chain',
        tools: [{ ...waitsForSignal, behaviour: 'json', value: {}, returnDirect: true }],
        turns: [
          {
            ...callsTool0,
            answer: { kind: 'calls', calls: [{ target: 0, args: 'valid', n: 0, withId: false }] },
          },
        ],
        options: {
          structured: 'none',
          validate: 'none',
          hooks: 'none',
          invalidToolCall: 'default',
          approvals: 'deadlineFail',
        },
        abortAtMs: 0,
        via: 'invoke',
      } satisfies ChainScenario,
      crash: 0,
    },
  },
  {
    // maxExecutionTime cancels a tool step and 'generate' goes on to its final call: the
    // cancelled call's result was journaled after that call's request, where a replay cannot
    // place it (a re-resume was a JournalMismatchError). Found by the fuzz once its options
    // were drawn at all (issue 16, budgets).
    name: 'journal-sound: a tool step cut short by maxExecutionTime journals no result after the run moved on',
    crashCase: {
      scenario: {
        kind: 'chain',
        tools: [
          { ...waitsForSignal, behaviour: 'gen', value: false, delayMs: 4, returnDirect: true },
        ],
        turns: [
          callsTool0,
          {
            ...callsTool0,
            answer: {
              kind: 'calls',
              calls: [{ target: 'stop', args: 'valid', n: 0, withId: true }],
            },
          },
        ],
        options: {
          structured: 'jsonObject',
          validate: 'none',
          hooks: 'none',
          invalidToolCall: 'default',
          maxExecutionTime: 5,
          earlyStopping: 'generate',
        },
        via: 'invoke',
      } satisfies ChainScenario,
      crash: 0,
    },
  },
];
