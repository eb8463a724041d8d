import type { RespondInput, ResponseOutcome } from '../../machines/tool-loop.js';
import type { ResumedCall } from '../host/run-details.js';
import type { Message } from '../messages.js';
import { checkModelResponse, modelSource } from '../model/check-response.js';
import { ResponseCollector } from '../model/collect-stream.js';
import type { LanguageModel, ModelRequest } from '../model/language-model.js';
import { responseText } from '../model/language-model.js';
import { childObserving } from '../observe/observe-agent-run.js';
import { Transcript } from '../transcript.js';
import { ZERO_USAGE } from '../usage.js';
import type { ToolLoopOptions } from './options.js';
import { responseMessages } from './response-messages.js';
import type { ToolLoopRunResources } from './run-resources.js';

/** How a loop makes its final response: a function, a chain, or a call to its model. */
export interface LoopResponding {
  readonly model: LanguageModel | undefined;
  /** `options.respond`, defaulted: true for a call to `model`. */
  readonly respond: NonNullable<ToolLoopOptions['respond']>;
  /** Read at every response. */
  readonly options: Pick<ToolLoopOptions, 'instructions'>;
}

/** The final response (the `respond` effect). */
export async function respondTo(
  responding: LoopResponding,
  input: RespondInput,
  signal: AbortSignal,
  hooks: ToolLoopRunResources | undefined,
  resumed?: ResumedCall,
): Promise<ResponseOutcome> {
  const { respond } = responding;
  const { userInput, extraRequirement, convergence } = input;
  if (typeof respond === 'function') {
    const text = await respond(
      {
        userInput,
        extraRequirement,
        actionResults: convergence?.actionResults ?? {},
        extraInstruction: convergence?.extraInstruction,
      },
      { signal },
    );
    return { text: String(text), result: text, usage: ZERO_USAGE };
  }
  const messages = responseMessages(
    userInput,
    extraRequirement,
    convergence,
    responding.options.instructions,
  );
  if (typeof respond === 'object') {
    // A chain responder's run is a child of this loop's run for observers (SPEC X4).
    const observing = childObserving(hooks?.recorder.observation);
    const answer = await respond.invoke({ messages }, { signal, ...observing });
    return { text: answer.text, result: answer.result, usage: answer.usage };
  }
  return respondWithModel(responding.model, messages, signal, hooks, resumed);
}

async function respondWithModel(
  model: LanguageModel | undefined,
  messages: Message[],
  signal: AbortSignal,
  hooks: ToolLoopRunResources | undefined,
  resumed: ResumedCall | undefined,
): Promise<ResponseOutcome> {
  if (!model) throw new Error('unreachable: toolLoopConfig requires a model to respond with');
  const request: ModelRequest = { messages: Transcript.from(messages) };
  const onDelta = hooks?.onDelta;
  const call = async () => {
    if (!onDelta) {
      return checkModelResponse(await model.generate(request, { signal }), modelSource(model));
    }
    const collector = new ResponseCollector();
    for await (const part of model.stream(request, { signal })) {
      if (part.type === 'text-delta') onDelta(part.delta);
      collector.add(part);
    }
    return checkModelResponse(collector.response(), modelSource(model));
  };
  const response = await (hooks
    ? hooks.recorder.modelCall('respond', request, onDelta !== undefined, call, resumed)
    : call());
  const text = responseText(response);
  return { text, result: text, usage: response.usage };
}
