import {
  type ChainConfig,
  type ChainEffectRequest,
  type ChainInput,
  type ChainMachine,
  type ChainOutput,
  chainMachine,
} from '../../machines/chain.js';
import { ConfigError } from '../errors.js';
import { RunRecorder } from '../host/run-details.js';
import { RunHost } from '../host/run-host.js';
import { checkedRunInput } from '../host/run-input.js';
import type { RunTypes } from '../host/run-kind.js';
import { isRecord } from '../is-record.js';
import { userMessage } from '../messages.js';
import type { JsonSchema, ResponseFormat } from '../model/language-model.js';
import { OptionProblems } from '../options/problems.js';
import {
  anyJson,
  type StandardSchema,
  type StructuredOutput,
  structuredOutput,
} from '../structured/output-schema.js';
import { LocalToolRegistry } from '../tool-calls/local-registry.js';
import { answerValidator } from './answer-validation.js';
import { chainEffects } from './effects.js';
import { CHAIN_OPTIONS, type ChainOptions, chainConfig } from './options.js';
import { chainCrashed, chainError, chainPartial, chainResult } from './results.js';
import {
  type ChainRunResources,
  type ChainSnapshot,
  type ChainToolSetup,
  chainRunResources,
  disposeChainRun,
  type PartListener,
} from './run-resources.js';
import { chainStreamEvents } from './stream-events.js';

export type { Chain } from './chain.js';
export type {
  ChainPartialResult,
  ChainResult,
  ChainRunInput,
  ChainRunOptions,
  ChainStreamEvent,
} from './run-types.js';

import type { Chain } from './chain.js';
import type { ChainResult, ChainRunInput, ChainRunOptions, ChainStreamEvent } from './run-types.js';

/**
 * Builds a chain (SPEC C): validates every option at once (ConfigError naming it), provides
 * the chain machine's effects, and runs it. What happens next (think, run tools, warn,
 * correct, stop) is decided by machines/chain.ts; its effects are performed by
 * effects.ts, answers checked by answer-validation.ts, and runs kept by the run
 * host (run-host.ts).
 */
export function createChain<T>(
  options: ChainOptions<T> & { readonly outputSchema: StandardSchema<T> },
): Chain<T>;
/** A JSON Schema or a JSON response format: the result is parsed JSON of no static type. */
export function createChain(
  options: ChainOptions<unknown> &
    (
      | { readonly outputSchema: JsonSchema }
      | { readonly responseFormat: { readonly type: 'json_object' | 'json_schema' } }
    ),
): Chain<unknown>;
/** No structured output: the result is the answer's text. */
export function createChain(options: ChainOptions<string>): Chain<string>;
/** Any options, with the result type stated: `createChain<Invoice>({ outputSchema: jsonSchema })`. */
export function createChain<T>(options: ChainOptions<T>): Chain<T>;
export function createChain<T>(options: ChainOptions<T>): Chain<T> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'createChain needs an options object with at least a model');
  }
  // Every problem of the options is reported at once (SPEC Q4): the registry's (`tools`: an
  // array of defined tools, unique names), the schema's, and every other option's.
  const problems = new OptionProblems('createChain');
  const checkedLocal = problems.check(
    () => new LocalToolRegistry(options.tools ?? CHAIN_OPTIONS.defaults.tools),
  );
  // SPEC C6: the schema an answer is checked against comes from outputSchema, or else from a
  // json_schema responseFormat; json_object only requires the answer to hold JSON.
  const format = options.responseFormat;
  const structured: StructuredOutput | undefined = problems.check(() =>
    options.outputSchema
      ? structuredOutput(options.outputSchema)
      : // A schema that is not an object is chainConfig's to report, as responseFormat.schema.
        format?.type === 'json_schema' && isRecord(format.schema)
        ? structuredOutput(format.schema, format.name)
        : format?.type === 'json_object'
          ? anyJson
          : undefined,
  );
  const config: ChainConfig = chainConfig(
    options as ChainOptions<unknown>,
    checkedLocal?.list() ?? [],
    problems, // throws every problem found, these two's included
  );
  const local = checkedLocal as LocalToolRegistry;
  const responseFormat: ResponseFormat | undefined =
    options.responseFormat ?? structured?.responseFormat;
  const { model } = options;
  let remote = options.remote;
  const name = options.name ?? CHAIN_OPTIONS.defaults.name;

  const tools: ChainToolSetup = { local, remote: () => remote, options, hooks: options };
  const host: RunHost<ChainRunTypes<T>> = new RunHost<ChainRunTypes<T>>({
    kind: 'chain',
    noun: 'chain',
    name,
    model,
    ...(config.prices && { price: config.prices }),
    config,
    machine: chainMachine,
    deadline: {
      delay: 'maxExecutionTime',
      limitMs: (runConfig) => runConfig.maxExecutionTime ?? 0,
    },
    effects: chainEffects({
      model,
      options,
      responseFormat,
      validate: answerValidator(structured, options),
    }),
    checksInputFirst: false,
    input,
    runInput: chainRunInput,
    resources: (recorder, onPart, journal, runOptions) =>
      chainRunResources(tools, onPart, recorder, journal, runOptions),
    childResources: (recorder) =>
      chainRunResources(tools, undefined, recorder ?? new RunRecorder(undefined, config.prices)),
    dispose: disposeChainRun,
    crashed: chainCrashed,
    result: chainResult,
    error: chainError,
    partial: chainPartial,
    streamEvents: chainStreamEvents,
  });

  function input(run: string | ChainRunInput): ChainInput {
    const runInput =
      typeof run === 'string'
        ? { messages: [userMessage(run)] }
        : checkedRunInput(run, `chain '${name}'`);
    return {
      config,
      messages: runInput.messages,
      ...(runInput.intermediateResults && { intermediateResults: runInput.intermediateResults }),
    };
  }

  return {
    name,
    machine: host.machine as ChainMachine<T>,
    input,
    invoke: host.invoke,
    resume: host.resume,
    // The generic Output only keeps Chain<T> assignable to Chain<unknown>; it is ChainOutput<T>.
    durable: host.durable as Chain<T>['durable'],
    batch: host.batch,
    stream: host.stream,
    connect(next) {
      if (!next || typeof next.execute !== 'function' || typeof next.listTools !== 'function') {
        throw new TypeError(
          'connect(remote): remote must implement listTools() and execute(call, { signal })',
        );
      }
      remote = next;
    },
    disconnect() {
      remote = undefined;
    },
  };
}

/** The types of a chain's runs, for its run host. */
interface ChainRunTypes<T> extends RunTypes {
  readonly runInput: string | ChainRunInput;
  readonly runOptions: ChainRunOptions;
  readonly input: ChainInput;
  readonly output: ChainOutput;
  readonly result: ChainResult<T>;
  readonly event: ChainStreamEvent<T>;
  readonly resources: ChainRunResources;
  readonly listener: PartListener;
  readonly snapshot: ChainSnapshot;
  readonly request: ChainEffectRequest;
}

/** What observers are told a chain actor an app's machine invoked started with: invoke()'s input shape. */
function chainRunInput(machineInput: unknown): unknown {
  if (typeof machineInput !== 'object' || machineInput === null) return machineInput;
  const { messages, intermediateResults } = machineInput as Partial<ChainInput>;
  return { messages, ...(intermediateResults && { intermediateResults }) };
}
