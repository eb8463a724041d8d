import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolSpec } from '../model/language-model.js';

/**
 * A tool executor outside this process (the seed's "Neural"; MCP servers later). The chain
 * asks it first for the tools it lists, and falls back to the local registry for the rest
 * (SPEC C10). `execute` may throw: the chain turns that into a failed ToolResult.
 */
export interface RemoteToolExecutor {
  /** A name for logs and errors, e.g. the server it talks to. */
  readonly name: string;
  /** The tools it can run, as the model should see them. */
  listTools(options?: {
    readonly signal?: AbortSignal;
  }): Promise<readonly ToolSpec[]> | readonly ToolSpec[];
  execute(call: ToolCall, options: { readonly signal: AbortSignal }): Promise<ToolResult>;
}
