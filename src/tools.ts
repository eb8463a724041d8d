// `statecraft/tools`: running tools outside a chain: the local registry, one tool call,
// JSON-safe outputs.

export {
  LocalToolRegistry,
  type RunToolOptions,
  runTool,
} from '../adapters/tools/local-registry.js';
export { STOP_STREAM_TOOL } from './runtime/run-tools.js';
export type { RemoteToolExecutor } from './tools/remote-executor.js';
export { jsonSafeOutput } from './tools/safe-output.js';
