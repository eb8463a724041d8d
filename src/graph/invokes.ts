import type { AnyStateMachine } from 'xstate';
import { descendants, nodePath } from './state-nodes.js';

// Where a machine invokes what. Path tests key a child's outcomes by the invoke's `id` (the
// id its `xstate.done.actor.<id>` events carry), but a replay can only replace a child through
// `machine.provide({ actors: { <src>: … } })`, which is keyed by the invoke's `src`: this file
// maps one to the other and refuses what cannot be replaced.

export interface InvokeSite {
  /** The invoke's `id` (xstate's generated `<index>.<state id>` when none was given). */
  readonly id: string;
  /** The key of its logic in setup({ actors }), or xstate's name for inline logic. */
  readonly src: string;
  /** The state node that invokes it, as an `a.b` path. */
  readonly state: string;
  /** True when `src` was logic written inline rather than a named key. */
  readonly inline: boolean;
}

/** Every invoke of the machine, at any depth, in document order. */
export function invokeSites(machine: AnyStateMachine): InvokeSite[] {
  return [machine.root, ...descendants(machine.root)].flatMap((node) => {
    // The config keeps what was written; StateNode.invoke names inline logic
    // `xstate.invoke.<index>.<state id>`, which provide() cannot address.
    const written: unknown[] = [node.config.invoke ?? []].flat();
    return node.invoke.map((invoke, i) => ({
      id: invoke.id,
      src: String(invoke.src),
      state: nodePath(node),
      inline: typeof (written[i] as { src?: unknown } | undefined)?.src !== 'string',
    }));
  });
}

/**
 * The sources to replace for the listed invoke ids, with clear errors for an id the machine
 * does not invoke, an inline src, and a src shared with an invoke that is not listed (the
 * replacement would take that one over too).
 */
export function scriptedSources(
  machine: AnyStateMachine,
  ids: readonly string[],
  caller: string,
): Map<string, string[]> {
  const sites = invokeSites(machine);
  const listed = new Set(ids);
  const sources = new Map<string, string[]>();
  for (const id of ids) {
    const own = sites.filter((site) => site.id === id);
    if (own.length === 0) {
      const known = sites.map((s) => `'${s.id}' (src ${s.src}, in ${s.state})`).join(', ');
      throw new Error(
        `${caller}: actors.${id}: the machine invokes no actor with id '${id}'. Key \`actors\` by the invoke's \`id\`; the machine's invokes: ${known || 'none'}.`,
      );
    }
    for (const site of own) {
      if (site.inline) {
        throw new Error(
          `${caller}: actors.${id}: the invoke '${id}' in state '${site.state}' has inline logic as its src. Name it in setup({ actors: { ${id}: … } }) and invoke it as src: '${id}', so a replay can replace it with machine.provide({ actors }).`,
        );
      }
      const others = sites.filter((s) => s.src === site.src && !listed.has(s.id));
      if (others.length > 0) {
        const other = others.map((s) => `'${s.id}' (in ${s.state})`).join(', ');
        throw new Error(
          `${caller}: actors.${id}: its src '${site.src}' is also invoked as ${other}, which \`actors\` does not list. A replay replaces a src for all its invokes: list those ids too (with no outcomes, a child never settles).`,
        );
      }
      const forSrc = sources.get(site.src) ?? [];
      if (!forSrc.includes(id)) forSrc.push(id);
      sources.set(site.src, forSrc);
    }
  }
  return sources;
}
