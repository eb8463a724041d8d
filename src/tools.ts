// `statecraft/tools`: running tools outside a chain: the local registry, one tool call,
// JSON-safe outputs.

export { jsonSafeOutput } from './json-safe.js';
export {
  LocalToolRegistry,
  type RunToolOptions,
  runTool,
} from './tool-calls/local-registry.js';
export { STOP_STREAM_TOOL } from './tool-calls/run-tools.js';
export type { RemoteToolExecutor } from './tools/remote-executor.js';
