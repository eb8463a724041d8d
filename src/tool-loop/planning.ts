import type { PlanOutcome } from '../../machines/tool-loop.js';
import { AbortError, throwIfAborted } from '../errors.js';
import { isAsyncIterable } from '../host/async-iterable.js';
import type { ResumedCall, RunRecorder } from '../host/run-details.js';
import { isRecord } from '../is-record.js';
import { linkedController } from '../linked-controller.js';
import { checkModelResponse, modelSource } from '../model/check-response.js';
import type {
  LanguageModel,
  ModelRequest,
  ResponseFormat,
  StreamPart,
} from '../model/language-model.js';
import { responseText } from '../model/language-model.js';
import { type PlannerContext, plannerMessages } from '../plan/planner-context.js';
import { jsonCandidates } from '../structured/extract-json.js';
import { Transcript } from '../transcript.js';
import { type Usage, ZERO_USAGE } from '../usage.js';
import { readPlanStream, type StreamedPlan } from './instant-plan.js';
import type { Planner } from './options.js';

/** Who plans a loop's rounds: a planner of your own, or the model; how a stream is read. */
export interface LoopPlanning {
  readonly model: LanguageModel | undefined;
  readonly planner: Planner | undefined;
  /** Read a streaming plan only up to `nextAction: "response"`. */
  readonly instant: boolean;
  /** The plan's JSON schema, the tools' names in it. */
  readonly responseFormat: ResponseFormat;
}

/** One round's plan (the `plan` effect), recorded for details() when the model makes it. */
export async function plan(
  planning: LoopPlanning,
  context: PlannerContext,
  signal: AbortSignal,
  recorder: RunRecorder | undefined,
  resumed?: ResumedCall,
): Promise<PlanOutcome> {
  const { model, planner, instant } = planning;
  throwIfAborted(signal);
  if (planner) {
    const answer = await planner(context, { signal });
    if (isAsyncIterable(answer)) {
      // A planner of your own that streams: read early with `instant`, whole without.
      return instant
        ? planOf(await readPlanStream(textParts(answer), () => {}))
        : parsedPlan(await joinText(answer), ZERO_USAGE);
    }
    if (typeof answer === 'string') return parsedPlan(answer, ZERO_USAGE);
    return { raw: answer, usage: ZERO_USAGE, shortCircuited: false };
  }
  if (!model) throw new Error('unreachable: toolLoopConfig requires a model or a planner');
  const request: ModelRequest = {
    messages: Transcript.from(plannerMessages(context)),
    responseFormat: planning.responseFormat,
  };
  const purpose = `plan round ${context.roundIndex + 1}`;
  if (!instant) {
    const call = async () =>
      checkModelResponse(await model.generate(request, { signal }), modelSource(model));
    const response = await (recorder
      ? recorder.modelCall(purpose, request, false, call, resumed)
      : call());
    return parsedPlan(responseText(response), response.usage);
  }
  // Our own controller, so deciding early can cancel the provider call without ending the run.
  const { controller: early, unlink } = linkedController(signal);
  const recording = recorder?.startModelCall(purpose, request, true, resumed);
  try {
    const streamed = await readPlanStream(model.stream(request, { signal: early.signal }), () =>
      early.abort(DECIDED_EARLY),
    );
    // Checked like any response (SPEC Q3): a usage part of the wrong shape counts zero.
    const answer = checkModelResponse(
      {
        content: [{ type: 'text', text: streamed.text }],
        usage: streamed.usage,
        finishReason: streamed.shortCircuited
          ? { unified: 'other', raw: 'decided on nextAction: response; the rest was not read' }
          : { unified: 'stop', raw: undefined },
      },
      modelSource(model),
    );
    recording?.answered(answer);
    return planOf({ ...streamed, usage: answer.usage });
  } catch (error) {
    recording?.failed(error);
    throw error;
  } finally {
    unlink();
  }
}

/** Why a planner stream was cancelled when it decided early; not an error of the run. */
const DECIDED_EARLY = new AbortError('The plan was decided from its first field');

/** A plan read from a stream: decided early, or parsed from the whole text. */
function planOf(streamed: StreamedPlan): PlanOutcome {
  if (streamed.shortCircuited) {
    return { raw: { nextAction: 'response' }, usage: streamed.usage, shortCircuited: true };
  }
  return parsedPlan(streamed.text, streamed.usage);
}

/** The first JSON object in a planner's text; a described error when there is none. */
function parsedPlan(text: string, usage: Usage): PlanOutcome {
  for (const candidate of jsonCandidates(text)) {
    if (isRecord(candidate)) return { raw: candidate, usage, shortCircuited: false };
  }
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return {
    raw: undefined,
    error: `Your answer held no JSON object. It began: ${JSON.stringify(shown)}. Answer with the plan as one JSON object.`,
    usage,
    shortCircuited: false,
  };
}

async function joinText(chunks: AsyncIterable<unknown>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += String(chunk);
  return text;
}

async function* textParts(chunks: AsyncIterable<unknown>): AsyncIterable<StreamPart> {
  for await (const chunk of chunks) yield { type: 'text-delta', delta: String(chunk) };
}
