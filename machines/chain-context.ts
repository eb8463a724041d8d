import { InputError } from '../src/errors.js';
import { Transcript } from '../src/transcript.js';
import { ZERO_USAGE } from '../src/usage.js';
import { NO_APPROVALS } from './approvals.js';
import type { ChainContext, ChainInput } from './chain-types.js';

// The context a chain run starts with, from the input `chain.input(...)` makes. Pure.

const NO_DUPLICATES: ChainContext['duplicates'] = { history: [], warned: [] };

/** The machine's initial context; an input of another shape is an InputError. */
export function initialContext({ input }: { input: unknown }): ChainContext {
  checkMachineInput(input);
  const transcript = Transcript.from(input.messages);
  return {
    config: input.config,
    transcript,
    pending: [],
    mutationLog: [],
    snapshot: undefined,
    request: transcript,
    iterations: 0,
    usage: ZERO_USAGE,
    warned: { iterations: false, tokens: false },
    response: undefined,
    toolCalls: [],
    stepResults: [],
    duplicates: NO_DUPLICATES,
    approvals: NO_APPROVALS,
    steps: [],
    limitReached: undefined,
    result: undefined,
    intermediateResults: input.intermediateResults ?? {},
    failure: undefined,
  };
}

/**
 * The machine runs only on what `chain.input(...)` makes: an app that invokes it with other
 * input learns so here, not from a TypeError deep in a guard (issue 13, defect 9).
 */
function checkMachineInput(input: unknown): asserts input is ChainInput {
  const candidate = input as Partial<ChainInput> | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.config !== 'object' ||
    candidate.config === null ||
    !Array.isArray(candidate.messages)
  ) {
    throw new InputError(
      "The chain machine needs the input chain.input(...) makes ({ config, messages }): invoke it with `input: ({ context }) => chain.input('…')`",
    );
  }
}
