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
          `${caller}: actors.${id}: its src '${site.src}' is also invoked as ${other}, which \`actors\` does not list. A replay replaces a src for all its invokes: list those ids too ('never' for a child that never answers).`,
        );
      }
      const forSrc = sources.get(site.src) ?? [];
      if (!forSrc.includes(id)) forSrc.push(id);
      sources.set(site.src, forSrc);
    }
  }
  return sources;
}

/**
 * Throws unless `actors` lists every invoke of the machine. An unlisted invoke could never
 * answer in a traversal, so "unreachable" would hold only for a child that never answers,
 * and a replay would have to run the real actor (its side effects included).
 */
export function checkAllListed(
  machine: AnyStateMachine,
  listed: readonly string[],
  caller: string,
): void {
  const missing = new Map<string, InvokeSite[]>();
  for (const site of invokeSites(machine)) {
    if (listed.includes(site.id)) continue;
    missing.set(site.id, [...(missing.get(site.id) ?? []), site]);
  }
  if (missing.size === 0) return;
  const described = [...missing].map(
    ([id, sites]) =>
      `'${id}' (src ${[...new Set(sites.map((s) => s.src))].join(', ')}, in ${sites.map((s) => s.state).join(', ')})`,
  );
  const [first] = missing.keys();
  const one = missing.size === 1;
  throw new Error(
    `${caller}: \`actors\` lists no outcomes for the invoke${one ? '' : 's'} ${described.join(', ')}: a traversal could never settle ${one ? 'it' : 'them'}, so a proof would hold only for ${one ? 'a child that never answers' : 'children that never answer'}, and a replay would have to run the real actor${one ? '' : 's'}. List ${one ? 'its' : 'their'} outputs and errors (actors: { ${first}: { outputs: [...], errors: [...] } }), or say ${one ? 'it' : 'one'} never answers (actors: { ${first}: 'never' }).`,
  );
}

/**
 * The sources a replay of `machine` replaces, each with its invoke ids: every invoked src,
 * so that no real child runs (a child the path does not settle never answers).
 */
export function stubbedSources(machine: AnyStateMachine, caller: string): Map<string, string[]> {
  const sites = invokeSites(machine);
  return scriptedSources(machine, [...new Set(sites.map((site) => site.id))], caller);
}
