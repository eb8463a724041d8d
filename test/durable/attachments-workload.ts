// What durable-attachments.test.ts and its child share: a chain whose input holds an image and
// whose tool returns that same image twice, and a model that says how many images it was sent.
import { attachment, createChain, defineTool, type LanguageModel, toolOutput } from 'statecraft';
import type { ModelRequest, ModelResponse } from 'statecraft/model';
import { z } from 'zod';

export const ATTACHMENT_RUN_ID = 'attachments-run';

/** 3 KB of a PNG: its signature, then bytes that make base64 no other text in a journal holds. */
export const IMAGE_BYTES = (() => {
  const bytes = new Uint8Array(3072);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 131 + 17) % 251;
  return bytes;
})();
export const IMAGE = attachment({ data: IMAGE_BYTES, name: 'screen.png' });
export const IMAGE_BASE64 = IMAGE.data as string;

export const ATTACHMENT_INPUT = {
  messages: [
    { role: 'user' as const, content: 'What changed on my screen?', attachments: [IMAGE] },
  ],
};

/** The step of a request: the assistant messages before it. */
export const stepOf = (request: ModelRequest) =>
  request.messages.toArray().filter((message) => message.role === 'assistant').length;

/** Every attachment a request carries (user messages' and tool results'). */
export const imagesIn = (request: ModelRequest) =>
  request.messages
    .toArray()
    .flatMap((message) =>
      message.role === 'user' || message.role === 'tool' ? (message.attachments ?? []) : [],
    );

/**
 * Two steps calling `screenshot`, then an answer naming the images the model was sent and
 * whether each is the input's bytes: only a transcript rebuilt with every attachment says
 * "3 images, all the same".
 */
export function attachmentModel(onStep?: (step: number) => Promise<void>): LanguageModel {
  const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
  const model: LanguageModel = {
    specificationVersion: 'v1',
    provider: 'test',
    modelId: 'attachments',
    async generate(request): Promise<ModelResponse> {
      const step = stepOf(request);
      await onStep?.(step);
      if (step < 2) {
        return {
          content: [
            {
              type: 'tool-call',
              toolCall: { id: `shot${step}`, name: 'screenshot', arguments: {} },
            },
          ],
          usage,
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        };
      }
      const images = imagesIn(request);
      const same = images.every((image) => image.data === IMAGE_BASE64);
      const names = images.map((image) => image.name).join(',');
      return {
        content: [
          {
            type: 'text',
            text: `${images.length} images, ${same ? 'all the same' : 'different'}: ${names}`,
          },
        ],
        usage,
        finishReason: { unified: 'stop', raw: 'stop' },
      };
    },
    async *stream(request) {
      const response = await model.generate(request);
      for (const part of response.content) {
        if (part.type === 'text') yield { type: 'text-delta' as const, delta: part.text };
        else if (part.type === 'tool-call')
          yield { type: 'tool-call' as const, toolCall: part.toolCall };
      }
      yield { type: 'finish' as const, finishReason: response.finishReason };
    },
  };
  return model;
}

export const screenshot = defineTool({
  name: 'screenshot',
  description: 'Takes a screenshot',
  input: z.object({}),
  execute: async () => toolOutput({ taken: true }, [IMAGE]),
});

export const EXPECTED_ANSWER = '3 images, all the same: screen.png,screen.png,screen.png';

export function attachmentChain(model: LanguageModel) {
  return createChain({ model, tools: [screenshot] });
}
