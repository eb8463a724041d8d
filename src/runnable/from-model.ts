import { type Message, userMessage } from '../messages.js';
import { ResponseCollector } from '../model/collect-stream.js';
import type { LanguageModel, ModelRequest, ModelResponse } from '../model/language-model.js';
import { Transcript } from '../transcript.js';
import { createRunnable, type Runnable } from './runnable.js';

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
    run: async (input, context) => {
      const request = requestOf(input, settings);
      const { signal } = context.config;
      const options = signal ? { signal } : {};
      if (!context.streaming) return model.generate(request, options);
      const collector = new ResponseCollector();
      for await (const part of model.stream(request, options)) {
        collector.add(part);
        if (part.type === 'text-delta') context.emit({ type: 'text-delta', delta: part.delta });
        if (part.type === 'tool-call') context.emit({ type: 'tool-call', toolCall: part.toolCall });
      }
      return collector.response();
    },
  });
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
