// `statecraft/ai-sdk`: statecraft with the AI SDK. Any of its provider models as a statecraft
// model (`fromAiSdk`); runs out to a chat UI as the AI SDK's UI message stream (what `useChat`
// and `Chat` read), and a browser's approvals back to durable runs. A subpath of its own:
// nothing here loads `ai` or `@ai-sdk/*`, which stay the app's choice.

export {
  type AiSdkLanguageModel,
  type AiSdkModelName,
  type AiSdkSpecVersion,
  type AiSdkWarning,
  type FromAiSdkOptions,
  fromAiSdk,
  type ToolResultFiles,
} from '../adapters/models/ai-sdk.js';
export type { UIFinishReason, UIMessageChunk } from './ui-stream/chunks.js';
export {
  type NodeResponse,
  UI_MESSAGE_STREAM_HEADERS,
  uiMessageStreamResponse,
  uiMessageStreamSse,
  writeUIMessageStream,
} from './ui-stream/sse.js';
export {
  toUIMessageStream,
  type UIMessageStreamOptions,
  type UIStreamSource,
} from './ui-stream/to-ui-message-stream.js';
export {
  decideUIApprovals,
  type UIApprovalDecider,
  type UIApprovalOutcome,
  type UIApprovalResponse,
  uiApprovalResponses,
} from './ui-stream/ui-approvals.js';
