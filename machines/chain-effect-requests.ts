import { answerTextOf } from './chain-output.js';
import type { ChainArgs, ChainEffectRequest } from './chain-types.js';
import { directReturnCall } from './early-stopping.js';

// What the chain asks of its `effects` actor: each function is the request an action sends
// (`sendTo('effects', …)`), named in its comment. The host performs it and answers with an
// event; the machine never waits on anything else. Pure.

type ContextArgs = Pick<ChainArgs, 'context'>;

/** Action `requestModelCall`: the compiled messages of this turn. */
export function modelCallRequest({ context }: ContextArgs): ChainEffectRequest {
  return {
    type: 'callModel',
    input: { messages: context.request, iteration: context.iterations },
  };
}

/** Action `requestFinalAnswer`: the last call, made without tools, so it must answer. */
export function finalAnswerRequest({ context }: ContextArgs): ChainEffectRequest {
  return {
    type: 'callModel',
    input: { messages: context.request, iteration: context.iterations, final: true },
  };
}

/**
 * Action `onEnterDoing` (the seed's on_enter_doing): hand the calls (duplicates already
 * answered) to the tools, naming the one whose output would be the answer.
 */
export function toolStepRequest({ context }: ContextArgs): ChainEffectRequest {
  const calls = context.toolCalls.filter(
    (call) => !context.stepResults.some((r) => r.toolCallId === call.id),
  );
  const direct = directReturnCall(context.toolCalls, context.config.returnDirectTools);
  return {
    type: 'executeTools',
    input: direct && calls.includes(direct) ? { calls, directCallId: direct.id } : { calls },
  };
}

/** Action `requestValidation`: the answer's text, for structured output and validateResult. */
export function validationRequest({ context }: ContextArgs): ChainEffectRequest {
  return { type: 'validateResult', input: { text: answerTextOf(context) } };
}

/**
 * Action `cancelEffects`: the host aborts what is in flight and drops its answer, so no late
 * answer reaches `stopping`'s successors.
 */
export function cancelRequest({ context }: ContextArgs): ChainEffectRequest {
  return { type: 'cancel', reason: context.limitReached ?? 'maxExecutionTime' };
}
