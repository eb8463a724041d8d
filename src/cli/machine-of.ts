import type { AnyStateMachine } from 'xstate';
import type { PathTestOptions } from '../graph/path-tests.js';
import { isRecord } from '../is-record.js';
import { describe } from '../viz/machine-check.js';
import { CliError } from './cli-error.js';

// What `graph` and `paths` accept as `<module>#<export>`: an XState machine, a Chain or a
// ToolLoop (each has its machine as `.machine`), or a paths spec — generatePathTests' options
// with the machine in them — or a list of specs of one machine (walked one after the other).

/** generatePathTests' options and the machine they walk: what `statecraft paths` runs. */
export type PathsSpec<TMachine extends AnyStateMachine = AnyStateMachine> =
  PathTestOptions<TMachine> & {
    readonly machine: TMachine;
    /** Says what this walk is, in the CLI's report (e.g. `maxIterations 2, earlyStopping force`). */
    readonly label?: string;
  };

export function isMachine(value: unknown): value is AnyStateMachine {
  const root = (value as { root?: { transitions?: unknown } } | null)?.root;
  return typeof value === 'object' && value !== null && root?.transitions instanceof Map;
}

function isSpec(value: unknown): value is PathsSpec {
  return (
    isRecord(value) && isMachine(value.machine) && !('invoke' in value) // a Chain or ToolLoop has a machine too
  );
}

/** The machine an export stands for, or a CliError that says what the export is instead. */
export function machineOf(value: unknown, where: string): AnyStateMachine {
  if (isMachine(value)) return value;
  const machine = (value as { machine?: unknown } | null)?.machine;
  if (typeof value === 'object' && value !== null && isMachine(machine)) return machine;
  const specs = Array.isArray(value) && value.length > 0 && value.every(isSpec) ? value : [];
  if (specs[0]) return specs[0].machine;
  throw new CliError(`${where} is ${describe(value)}, not ${WANTED}${hint(value)}`);
}

/** The walks an export asks for: its specs, or none when it is only a machine. */
export function specsOf(value: unknown): readonly PathsSpec[] {
  if (isSpec(value)) return [value];
  if (Array.isArray(value) && value.every(isSpec)) return value;
  return [];
}

const WANTED = 'an XState state machine, a Chain, a ToolLoop or a paths spec ({ machine, … })';

function hint(value: unknown): string {
  return typeof value === 'function'
    ? ': if it creates the machine, export the machine it returns'
    : '';
}
