import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AnyStateMachine } from 'xstate';
import type { Coverage, CoverageCount } from '../../graph/coverage.js';
import { TraversalLimitError, type TraversalLimits } from '../../graph/limits.js';
import { generatePathTests } from '../../graph/path-tests.js';
import type { PathKind } from '../../graph/paths.js';
import { CliError } from '../cli-error.js';
import { loadExport } from '../load-export.js';
import { machineOf, type PathsSpec, specsOf } from '../machine-of.js';
import { builtinWalks } from '../walks/builtin-walks.js';

// `statecraft paths <module>#<export>`: how many paths a machine has and how much of it they
// cover (SPEC D2), with the same generator as `statecraft/testing`'s generatePathTests. A
// machine that invokes actors or waits for events needs to be told what they may answer: a
// paths spec export (generatePathTests' options plus `machine`) does that; the project's
// chain and tool-loop machines come with walks of their own (src/cli/walks/). A machine
// exported as it is gets its own event types offered, without data, so a plain machine's
// report is not a silent 1 state of 5; whatever the coverage misses comes with a hint.

const BARE = 'the machine alone';
const SPEC_EXAMPLE =
  'export const paths = { machine, input, events, actors: { <invoke id>: { outputs: [...], errors: [...] } } }';
const SPEC_HINT = `To walk it, export a paths spec: generatePathTests options with the machine, e.g. ${SPEC_EXAMPLE}`;

interface PathsOptions {
  readonly paths: PathKind;
  readonly maxDepth?: number;
  readonly maxPaths?: number;
  readonly maxStates?: number;
  readonly missing: boolean;
}

/** One walk to report: a spec, or a bare machine and the event types it is offered. */
type Walk =
  | { readonly spec: PathsSpec }
  | { readonly machine: AnyStateMachine; readonly types: readonly string[] };

interface Walked {
  readonly name: string;
  readonly suite: ReturnType<typeof suiteOf>;
  /** Why the walk offers fewer events than the machine has. */
  readonly note?: string;
}

export function pathsCommand(program: Command): void {
  program
    .command('paths')
    .description("count a machine's paths and the states and transitions they cover")
    .argument(
      '<module#export>',
      'a machine, Chain or ToolLoop, or a paths spec: generatePathTests options with `machine`',
    )
    .addOption(
      new Option('--paths <kind>', 'which paths: every simple path, or one shortest per state')
        .choices(['simple', 'shortest'])
        .default('simple'),
    )
    .option('--max-depth <n>', 'events on one path (limit)', positiveInteger('--max-depth'))
    .option('--max-paths <n>', 'paths per walk (limit)', positiveInteger('--max-paths'))
    .option(
      '--max-states <n>',
      'distinct snapshots per walk (limit)',
      positiveInteger('--max-states'),
    )
    .option('--no-missing', 'do not list the states and transitions no path takes')
    .addHelpText(
      'after',
      [
        '',
        'A machine exported as it is is offered its own event types, without data (`{ type }`).',
        'To walk events with data, invoke outcomes or an input, export a paths spec:',
        `  ${SPEC_EXAMPLE}`,
      ].join('\n'),
    )
    .action(async (ref: string, options: PathsOptions) => {
      const loaded = await loadExport(ref);
      const where = `${loaded.module}#${loaded.exportName}`;
      const machine = machineOf(loaded.value, where);
      const { walks, bare } = walksFor(loaded.value, machine, where);
      const { text, complete } = report(machine, walks, bare, options);
      process.stdout.write(text);
      if (!complete) {
        process.stderr.write(
          bare
            ? `hint: to walk what events without data do not reach (events with data, invoke outcomes, an input), export a paths spec: ${SPEC_EXAMPLE}\n`
            : 'hint: to cover the rest, add to the paths spec the events, invoke outcomes or input that reach it\n',
        );
      }
    });
}

function walksFor(
  value: unknown,
  machine: AnyStateMachine,
  where: string,
): { readonly walks: readonly Walk[]; readonly bare: boolean } {
  const specs = specsOf(value);
  if (specs.some((spec) => spec.machine !== machine)) {
    throw new CliError(`${where}: every paths spec in the list must walk the same machine`);
  }
  if (specs.length > 0) return { walks: specs.map((spec) => ({ spec })), bare: false };
  const builtin = builtinWalks(machine);
  if (builtin) return { walks: builtin.map((spec) => ({ spec })), bare: false };
  // A bare machine: no input and no invoke outcomes; its own events, without data.
  return { walks: [{ machine, types: ownEventTypes(machine) }], bare: true };
}

/**
 * The event types the machine itself handles, sorted: not XState's own (`xstate.done.actor.…`,
 * `xstate.after.…`, which the walk raises itself) and not wildcards (`*`, `user.*`).
 */
export function ownEventTypes(machine: AnyStateMachine): string[] {
  return machine.root.events
    .filter((type) => !type.startsWith('xstate.') && type !== '*' && !type.endsWith('.*'))
    .sort();
}

function report(
  machine: AnyStateMachine,
  walks: readonly Walk[],
  bare: boolean,
  options: PathsOptions,
) {
  const lines = [`${machine.id}: ${walks.length === 1 ? '1 walk' : `${walks.length} walks`}`];
  let total = 0;
  const coverages: Coverage[] = [];
  for (const [i, item] of walks.entries()) {
    let walked: Walked;
    if ('spec' in item) {
      const name = item.spec.label ?? (walks.length > 1 ? `walk ${i + 1}` : 'walk');
      try {
        walked = { name, suite: walk(item.spec, name, options) };
      } catch (error) {
        throw fail(error, name, bare);
      }
    } else {
      walked = walkBare(item.machine, item.types, options);
    }
    if (walked.note) lines.push(`  note: ${walked.note}`);
    total += walked.suite.paths.length;
    coverages.push(walked.suite.coverage);
    lines.push(`  ${walked.name}: ${plural(walked.suite.paths.length, 'path')}`);
  }
  const states = union(coverages.map((c) => c.states));
  const transitions = union(coverages.map((c) => c.transitions));
  lines.push(
    `paths        ${total} (${options.paths})`,
    `states       ${fraction(states)}`,
    `transitions  ${fraction(transitions)}`,
  );
  if (options.missing) {
    for (const state of states.missing) lines.push(`  never entered: ${state}`);
    for (const t of transitions.missing) lines.push(`  never taken:   ${t}`);
  }
  const complete = states.missing.length === 0 && transitions.missing.length === 0;
  return { text: `${lines.join('\n')}\n`, complete };
}

/**
 * A bare machine offered its event types without data. When one of them breaks the walk (an
 * action reads the event's data), the walk goes on without the events that break it alone.
 */
function walkBare(
  machine: AnyStateMachine,
  types: readonly string[],
  options: PathsOptions,
): Walked {
  const offer = (offered: readonly string[]) => {
    const name = offered.length > 0 ? `the machine with its events (${offered.join(', ')})` : BARE;
    const events = offered.map((type) => ({ type }));
    return { name, suite: walk({ machine, label: name, events }, name, options) };
  };
  try {
    return offer(types);
  } catch (error) {
    // A limit is a limit with or without events: raise it rather than walk less.
    if (error instanceof CliError || types.length === 0) throw fail(error, BARE, true);
    const breaks = (type: string) => {
      try {
        offer([type]);
        return false;
      } catch (alone) {
        return !(alone instanceof CliError);
      }
    };
    const broken = types.filter(breaks);
    const usable = broken.length > 0 ? types.filter((type) => !broken.includes(type)) : [];
    const note =
      broken.length > 0
        ? `left out ${broken.join(', ')}: without data, ${broken.length === 1 ? 'it breaks' : 'they break'} the walk (${messageOf(error)})`
        : `without data, its events together break the walk (${messageOf(error)}): walked without them`;
    try {
      return { ...offer(usable), note };
    } catch (again) {
      throw fail(again, BARE, true);
    }
  }
}

function walk(spec: PathsSpec, name: string, options: PathsOptions) {
  const { machine, label: _label, limits, ...rest } = spec;
  const merged: TraversalLimits = {
    ...limits,
    ...(options.maxDepth && { maxDepth: options.maxDepth }),
    ...(options.maxPaths && { maxPaths: options.maxPaths }),
    ...(options.maxStates && { maxStates: options.maxStates }),
  };
  return suiteOf(machine, { ...rest, limits: merged, paths: options.paths }, name);
}

function suiteOf(machine: AnyStateMachine, options: object, name: string) {
  try {
    return generatePathTests(machine, options as never);
  } catch (error) {
    if (error instanceof TraversalLimitError) {
      const flag = { maxDepth: '--max-depth', maxPaths: '--max-paths', maxStates: '--max-states' };
      const raise =
        error.limit in flag ? ` (raise it with ${flag[error.limit as keyof typeof flag]})` : '';
      throw new CliError(`${name}: ${error.message}${raise}`);
    }
    throw error;
  }
}

/**
 * What the walk needs and was not given (an input, an invoke's outcomes) is the user's to fix:
 * a CliError naming the walk, with how to give it for a bare machine.
 */
function fail(error: unknown, name: string, bare: boolean): Error {
  if (error instanceof CliError) return error;
  const hint = bare ? `\n${SPEC_HINT}` : '';
  return new CliError(`${name}: ${messageOf(error)}${hint}`, { cause: error });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What all walks together cover: an item is missing when every walk misses it. */
function union(counts: readonly CoverageCount[]): CoverageCount {
  const [first, ...rest] = counts;
  if (!first) return { covered: 0, total: 0, missing: [] };
  const missing = first.missing.filter((item) => rest.every((c) => c.missing.includes(item)));
  return { covered: first.total - missing.length, total: first.total, missing };
}

function fraction({ covered, total }: CoverageCount): string {
  const percent = total === 0 ? 100 : Math.floor((covered / total) * 1000) / 10;
  return `${covered}/${total} (${percent}%)`;
}

function positiveInteger(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) {
      throw new InvalidArgumentError(`${flag} must be a positive integer, got "${value}"`);
    }
    return n;
  };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
