import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolSpec } from '../model/language-model.js';

/**
 * A tool executor outside this process (the seed's "Neural"; MCP servers later). The chain
 * asks it first for the tools it lists, and falls back to the local registry for the rest,
 * and for a call it gives no return (SPEC C10). `execute` may throw: the chain turns that into
 * a failed ToolResult. Its result may carry `attachments` (images and files, as `attachment()`
 * makes them); one that is not `{ mediaType, data | url, name? }` fails the call with a result
 * that says so.
 */
export interface RemoteToolExecutor {
  /** A name for logs and errors, e.g. the server it talks to. */
  readonly name: string;
  /**
   * Whether a tool it lists may take the place of a local tool of the same name. Default
   * false: a run whose remote lists a local tool's name ends with a ToolCollisionError (a
   * ConfigError, code `TOOL_COLLISION`) at the model call that lists them. When true, the
   * remote runs such calls, and the local tool runs only when the remote gives no return
   * (resolves with something that is not a ToolResult).
   */
  readonly shadowLocalTools?: boolean;
  /** The tools it can run, as the model should see them. */
  listTools(options?: {
    readonly signal?: AbortSignal;
  }): Promise<readonly ToolSpec[]> | readonly ToolSpec[];
  /** `idempotencyKey`: in durable runs, the same on every attempt of this call (see ToolContext). */
  execute(
    call: ToolCall,
    options: { readonly signal: AbortSignal; readonly idempotencyKey?: string },
  ): Promise<ToolResult>;
}
