import { ConfigError, type StatecraftErrorOptions } from '../errors.js';
import type { ToolSpec } from '../model/language-model.js';
import type { RemoteToolExecutor } from './remote-executor.js';

/**
 * A remote tool executor lists a tool under the name of a local one (SPEC C10). Remote-first
 * would silently take the local tool over: its calls, whose arguments were meant for the
 * local tool, would go to the server, and a remote tool named like a local `returnDirect`
 * tool would end the run with the server's output. So the collision is refused unless the
 * remote opts in with `shadowLocalTools: true`.
 *
 * A ConfigError (`ConfigError.isInstance` holds, `option` is `remote`) with a code of its
 * own, naming the executor and every colliding tool.
 */
export class ToolCollisionError extends ConfigError {
  static override readonly code: string = 'TOOL_COLLISION';
  /** The remote executor's name. */
  readonly executor: string;
  /** The names both the remote and the local registry hold, in the remote's order. */
  readonly toolNames: readonly string[];

  constructor(executor: string, toolNames: readonly string[], options?: StatecraftErrorOptions) {
    const names = toolNames.map((n) => `'${n}'`).join(', ');
    const one = toolNames.length === 1;
    super(
      'remote',
      `the remote tool executor '${executor}' lists ${names}, ${one ? 'the name of a local tool' : 'names of local tools'}. ` +
        `A remote tool takes a local one's place only when the remote opts in: rename one of them, ` +
        'or set shadowLocalTools: true on the remote executor (an option of McpToolExecutor too).',
      options,
    );
    this.executor = executor;
    this.toolNames = Object.freeze([...toolNames]);
  }
}

/** Throws ToolCollisionError when `remote` lists a local name and has not opted in to shadowing. */
export function refuseCollisions(
  remote: RemoteToolExecutor,
  listed: readonly ToolSpec[],
  isLocal: (name: string) => boolean,
): void {
  if (remote.shadowLocalTools === true) return;
  const colliding = listed.filter((spec) => isLocal(spec.name)).map((spec) => spec.name);
  if (colliding.length > 0) throw new ToolCollisionError(remote.name, colliding);
}
