// The support-triage example's three agents as one Runnable pipeline (classify → research →
// draft), on the example's scripted models, with the latencies of real calls added: what the
// viewer's screenshot shows. Models and tools wait a fixed time before answering so the
// timeline has a realistic shape; no test asserts on those times.
import {
  type AnyTool,
  type ChainResult,
  createChain,
  createToolLoop,
  defineTool,
  fromFunction,
  type LanguageModel,
  pipe,
  runnable,
  type ToolLoopResult,
} from 'statecraft';
import { supportTools } from '../../examples/support-triage/agents.js';
import { type Ticket, type Triage, triageSchema } from '../../examples/support-triage/machine.js';
import { createScriptedModels, sampleTicket } from '../../examples/support-triage/models.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `model`, answering `ms` later, under a name that says it is scripted. */
function slowModel(model: LanguageModel, ms: number): LanguageModel {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    async generate(request, options) {
      await sleep(ms);
      return model.generate(request, options);
    },
    async *stream(request, options) {
      await sleep(ms);
      yield* model.stream(request, options);
    },
  };
}

function slowTool(tool: AnyTool, ms: number): AnyTool {
  return defineTool({
    ...tool,
    execute: async (args, context) => {
      await sleep(ms);
      return tool.execute(args, context);
    },
  });
}

/** The pipeline and the ticket to run it on, with the prompts the example's machine writes. */
export function triagePipeline(latencyMs = { model: 120, tool: 60 }) {
  const models = createScriptedModels();
  const classify = createChain({
    name: 'classify',
    model: slowModel(models.classifier, latencyMs.model),
    systemPrompt:
      'Classify the support ticket: its category, its urgency, and a one-sentence summary.',
    outputSchema: triageSchema,
  });
  const research = createToolLoop({
    name: 'research',
    model: slowModel(models.researcher, latencyMs.model),
    tools: supportTools.map((tool) => slowTool(tool, latencyMs.tool)),
    maxRounds: 3,
  });
  const draft = createChain({ name: 'draft', model: slowModel(models.writer, latencyMs.model) });
  const ticket: Ticket = sampleTicket;
  const app = pipe(
    fromFunction((t: Ticket) => `Ticket ${t.id}: ${t.subject}\n\n${t.body}`, 'ticket'),
    runnable(classify),
    fromFunction(
      ({ result }: ChainResult<Triage>) => ({
        userInput: `${ticket.subject}\n\n${ticket.body}\n\nTriage: ${result.summary}`,
        extraRequirement: 'Find the facts a support agent needs to answer this ticket.',
      }),
      'brief',
    ),
    runnable(research),
    fromFunction(
      ({ answer }: ToolLoopResult) =>
        [
          `Ticket ${ticket.id} from ${ticket.customer}: ${ticket.subject}`,
          ticket.body,
          `Research findings:\n${answer ?? '(none)'}`,
        ].join('\n\n'),
      'findings',
    ),
    runnable(draft),
  );
  return { app, ticket };
}
