import { type Message, userMessage } from '../messages.js';
import { checkModelResponse, modelSource } from '../model/check-response.js';
import { ResponseCollector } from '../model/collect-stream.js';
import type { LanguageModel, ModelRequest, ModelResponse } from '../model/language-model.js';
import { REPORTS_ITSELF } from '../observe/observe-agent-run.js';
import { type InheritsObservers, observersFor, RUN_OBSERVERS } from '../observe/registry.js';
import { observedTime, startObservation } from '../observe/run-observation.js';
import type { ObservedModelCall } from '../observe/run-observer.js';
import { Transcript } from '../transcript.js';
import { createRunnable } from './create-runnable.js';
import { observedSession } from './trace-run.js';
import type { RunContext, Runnable } from './types.js';

/** A model's input as a step: a prompt, a conversation, or a whole request. */
export type ModelInput =
  | string
  | readonly Message[]
  | (Omit<ModelRequest, 'messages'> & { readonly messages: Transcript | readonly Message[] });

/** Settings sent with every call unless the input is a request that sets its own. */
export type ModelSettings = Omit<ModelRequest, 'messages'>;

/**
 * A model adapter as a Runnable (SPEC R1): one call, streamed under `stream` (text deltas
 * and tool calls as they arrive) and generated under `invoke`.
 */
export function fromModel(
  model: LanguageModel,
  settings: ModelSettings = {},
  name = `${model.provider}:${model.modelId}`,
): Runnable<ModelInput, ModelResponse> {
  return createRunnable<ModelInput, ModelResponse>({
    name,
    kind: 'model',
    // Observers see this run with its model and its one model call (SPEC X4): what a trace
    // needs to show it as a model call, which a Runnable run's name and kind do not say.
    [REPORTS_ITSELF]: true,
    run: async (input, context) => {
      const { signal, observers } = context.config;
      const observation = startObservation(
        // The tree's observers, fixed when its top-level run started (as fromChain's are).
        observersFor(observers, (context.config as InheritsObservers)[RUN_OBSERVERS]),
        {
          ...context.run,
          model: { provider: model.provider, modelId: model.modelId },
          ...observedSession(context.config),
          startTime: observedTime(),
        },
        input,
      );
      let call: ObservedModelCall | undefined;
      try {
        const request = requestOf(input, settings);
        call = observation?.modelCallStart(
          1,
          'generation',
          request,
          context.streaming,
          performance.now(),
        );
        const response = await callModel(request, signal, context);
        if (call) observation?.modelCallAnswered(call, response, performance.now());
        observation?.succeeded(response, response.usage);
        return response;
      } catch (error) {
        if (call) observation?.modelCallFailed(call, error, performance.now());
        observation?.failed(error);
        throw error;
      }
    },
  });

  /** One call: streamed (its deltas passed on) when a stream reads the run, else generated. */
  async function callModel(
    request: ModelRequest,
    signal: AbortSignal | undefined,
    context: RunContext,
  ): Promise<ModelResponse> {
    const options = signal ? { signal } : {};
    // Checked at the boundary (SPEC Q3), as chains and tool loops check theirs.
    const source = modelSource(model);
    if (!context.streaming)
      return checkModelResponse(await model.generate(request, options), source);
    const collector = new ResponseCollector();
    for await (const part of model.stream(request, options)) {
      collector.add(part);
      if (part.type === 'text-delta') context.emit({ type: 'text-delta', delta: part.delta });
      if (part.type === 'tool-call') context.emit({ type: 'tool-call', toolCall: part.toolCall });
    }
    return checkModelResponse(collector.response(), source);
  }
}

function requestOf(input: ModelInput, settings: ModelSettings): ModelRequest {
  if (typeof input === 'string') {
    return { ...settings, messages: Transcript.from([userMessage(input)]) };
  }
  if (Array.isArray(input)) return { ...settings, messages: Transcript.from(input as Message[]) };
  const request = input as Exclude<ModelInput, string | readonly Message[]>;
  const messages =
    request.messages instanceof Transcript ? request.messages : Transcript.from(request.messages);
  return { ...settings, ...request, messages };
}
