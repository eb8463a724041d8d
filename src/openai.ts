// `statecraft/openai`: the OpenAI adapters and the OpenAI-compatible presets. A subpath of its
// own so that `import 'statecraft'` never loads the `openai` SDK (an optional peer).

export type { MaxTokensField } from '../adapters/models/openai/chat-request.js';
export {
  OPENAI_COMPATIBLE_PRESETS,
  OpenAIChatModel,
  type OpenAIChatModelOptions,
  type OpenAICompatibleOptions,
  type OpenAICompatiblePreset,
  type OpenAIModelOptions,
  OpenAIResponsesModel,
  openAICompatible,
} from '../adapters/models/openai.js';
