// The `statecraft/anthropic` entry: the Anthropic adapter, kept off the main entry so that
// `import 'statecraft'` never loads `@anthropic-ai/sdk` (an optional peer dependency).

export { anthropicModelError } from '../adapters/models/anthropic/errors.js';
export {
  type AnthropicParams,
  type AnthropicRequestSettings,
  EMPTY_USER_TEXT,
  type MidConversationSystem,
  mapMessages,
  toAnthropicParams,
  toAnthropicTool,
  toAnthropicToolChoice,
} from '../adapters/models/anthropic/request.js';
export {
  fromAnthropicMessage,
  mapStopReason,
  mapUsage,
} from '../adapters/models/anthropic/response.js';
export {
  type AnthropicStreamEvent,
  AnthropicStreamMapper,
} from '../adapters/models/anthropic/stream.js';
export {
  ANTHROPIC_NON_STREAMING_MAX_TOKENS,
  AnthropicModel,
  type AnthropicModelOptions,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
} from '../adapters/models/anthropic.js';
