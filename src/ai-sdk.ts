// `statecraft/ai-sdk`: statecraft with the AI SDK, any of its provider models as a model. It
// imports nothing of `ai` or `@ai-sdk/*` at run time, so it loads without them installed.

export type { ToolResultFiles } from '../adapters/models/ai-sdk/request.js';
export {
  type AiSdkLanguageModel,
  type AiSdkModelName,
  type AiSdkSpecVersion,
  type AiSdkWarning,
  type FromAiSdkOptions,
  fromAiSdk,
} from '../adapters/models/ai-sdk.js';
