import {
  type ToolLoopConfig,
  type ToolLoopEffectRequest,
  type ToolLoopInput,
  type ToolLoopOutput,
  toolLoopMachine,
} from '../../machines/tool-loop.js';
import { ConfigError, InputError } from '../errors.js';
import { RunHost } from '../host/run-host.js';
import type { RunTypes } from '../host/run-kind.js';
import { checkRunOptions } from '../host/run-options.js';
import { OptionProblems } from '../options/problems.js';
import { planResponseFormat } from '../plan/planner-context.js';
import { LocalToolRegistry } from '../tool-calls/local-registry.js';
import { toolLoopEffects } from './effects.js';
import { TOOL_LOOP_OPTIONS, type ToolLoopOptions, toolLoopConfig } from './options.js';
import {
  cancelledBeforeStart,
  loopCrashed,
  loopError,
  loopPartial,
  loopResult,
} from './results.js';
import {
  type DeltaListener,
  disposeLoopRun,
  loopChildResources,
  loopRunResources,
  type ToolLoopRunResources,
  type ToolLoopSnapshot,
} from './run-resources.js';
import { toolLoopStreamEvents } from './stream-events.js';

export type {
  ToolLoopPartialResult,
  ToolLoopResult,
  ToolLoopRunInput,
  ToolLoopRunOptions,
  ToolLoopStreamEvent,
} from './run-types.js';
export type { ToolLoop } from './tool-loop.js';

import type {
  ToolLoopResult,
  ToolLoopRunInput,
  ToolLoopRunOptions,
  ToolLoopStreamEvent,
} from './run-types.js';
import type { ToolLoop } from './tool-loop.js';

/**
 * Builds a tool loop (SPEC T): validates every option at once, provides the machine's
 * `plan`, `execute` and `respond` actors, and runs it. Whether to plan again, execute, stop
 * or respond is decided by machines/tool-loop.ts; the work is performed by
 * effects.ts, and runs kept by the run host (run-host.ts).
 */
export function createToolLoop(options: ToolLoopOptions): ToolLoop {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'createToolLoop needs an options object');
  }
  // Every problem of the options at once (SPEC Q4), the registry's (`tools`) included.
  const problems = new OptionProblems('createToolLoop');
  const checkedRegistry = problems.check(
    () => new LocalToolRegistry(options.tools ?? TOOL_LOOP_OPTIONS.defaults.tools),
  );
  const config: ToolLoopConfig = toolLoopConfig(options, problems);
  const registry = checkedRegistry as LocalToolRegistry; // toolLoopConfig threw otherwise
  const specs = registry.specs();
  const { model, planner } = options;
  const name = options.name ?? TOOL_LOOP_OPTIONS.defaults.name;
  const approvalSetup = { registry, approvalTimeoutMs: options.approvalTimeoutMs };
  // planOnly()'s runs: a probe that executes nothing needs no one to decide approvals.
  const probes = new WeakSet<object>();

  const host: RunHost<ToolLoopRunTypes> = new RunHost<ToolLoopRunTypes>({
    kind: 'tool-loop',
    noun: 'tool loop',
    name,
    model,
    config,
    journalFields: { ...config, tools: specs },
    machine: toolLoopMachine,
    // A durable run's timeout counts from its journaled start, across restarts.
    deadline: { delay: 'loopTimeout', limitMs: (runConfig) => runConfig.timeout ?? 0 },
    effects: toolLoopEffects({
      registry,
      options,
      model,
      planner,
      instant: options.instant ?? true,
      responseFormat: planResponseFormat(specs),
      respond: options.respond ?? model !== undefined,
    }),
    checksInputFirst: true,
    input,
    runInput: loopRunInput,
    resources: (recorder, onDelta, journal, runOptions) =>
      loopRunResources(
        approvalSetup,
        recorder,
        onDelta,
        journal,
        runOptions,
        probes.has(runOptions),
      ),
    childResources: (recorder) => loopChildResources(approvalSetup, recorder),
    dispose: disposeLoopRun,
    cancelledBeforeStart,
    crashed: loopCrashed,
    result: loopResult,
    error: loopError,
    partial: loopPartial,
    streamEvents: toolLoopStreamEvents,
  });

  function input(run: string | ToolLoopRunInput, runConfig = config): ToolLoopInput {
    const runInput = typeof run === 'string' ? { userInput: run } : run;
    if (
      typeof runInput !== 'object' ||
      runInput === null ||
      typeof runInput.userInput !== 'string'
    ) {
      throw new InputError(
        `tool loop '${name}': input must be a string, or { userInput: string, extraRequirement?: string }; got ${runInput === null ? 'null' : typeof runInput}`,
      );
    }
    if (runInput.extraRequirement !== undefined && typeof runInput.extraRequirement !== 'string') {
      throw new InputError(`tool loop '${name}': input.extraRequirement must be a string`);
    }
    return {
      config: runConfig,
      userInput: runInput.userInput,
      ...(runInput.extraRequirement !== undefined && {
        extraRequirement: runInput.extraRequirement,
      }),
      availableTools: specs,
    };
  }

  return {
    name,
    machine: host.machine as typeof toolLoopMachine,
    input,
    invoke: host.invoke,
    resume: host.resume,
    durable: host.durable,
    batch: host.batch,
    stream: host.stream,
    async planOnly(runInput, runOptions = {}) {
      checkRunOptions(runOptions, 'planOnly', `tool loop '${name}'`);
      // The same machine, told to stop after its first plan: the same stop conditions,
      // retries, timeout and errors as a run.
      const { recorder, input: loopInput } = host.start(runInput, runOptions, {
        ...config,
        planOnly: true,
        respond: false,
      });
      const probeOptions = { ...runOptions };
      probes.add(probeOptions);
      const output = await host.run(recorder, loopInput(), probeOptions);
      if (output.status === 'failed') throw host.errorOf(output, recorder);
      const plan = output.plans[0]?.plan ?? { nextAction: 'response', executionCommands: [] };
      recorder.observation?.succeeded(plan, output.usage);
      return plan;
    },
  };
}

/** The types of a loop's runs, for its run host. */
interface ToolLoopRunTypes extends RunTypes {
  readonly runInput: string | ToolLoopRunInput;
  readonly runOptions: ToolLoopRunOptions;
  readonly input: ToolLoopInput;
  readonly output: ToolLoopOutput;
  readonly result: ToolLoopResult;
  readonly event: ToolLoopStreamEvent;
  readonly resources: ToolLoopRunResources;
  readonly listener: DeltaListener;
  readonly snapshot: ToolLoopSnapshot;
  readonly request: ToolLoopEffectRequest;
}

/** What observers are told a loop actor an app's machine invoked started with: invoke()'s input shape. */
function loopRunInput(machineInput: unknown): unknown {
  if (typeof machineInput !== 'object' || machineInput === null) return machineInput;
  const { userInput, extraRequirement } = machineInput as Partial<ToolLoopInput>;
  return { userInput, ...(extraRequirement !== undefined && { extraRequirement }) };
}
