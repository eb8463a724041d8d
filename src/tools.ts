// `statecraft/tools`: running tools outside a chain: the local registry, one tool call,
// JSON-safe outputs.

export {
  LocalToolRegistry,
  type RunToolOptions,
  runTool,
} from './tools/local-registry.js';
export type { RemoteToolExecutor } from './tools/remote-executor.js';
export { STOP_STREAM_TOOL } from './tools/run-tools.js';
export { jsonSafeOutput } from './tools/safe-output.js';
