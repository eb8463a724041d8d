import { summarizeAttachment } from '../attachment-summary.js';
import { type Message, systemMessage, userMessage } from '../messages.js';
import type { ResponseFormat, ToolSpec } from '../model/language-model.js';
import type { ToolExecutionRecord } from './records.js';

/** What a planner sees each round (SPEC T3). Plain JSON. */
export interface PlannerContext {
  readonly userInput: string;
  /** The caller's extra requirement for this run; '' when none. */
  readonly extraRequirement: string;
  readonly availableTools: readonly ToolSpec[];
  /** Every record of every round so far. */
  readonly donePlans: readonly ToolExecutionRecord[];
  /** The records of the round just executed; [] before the first. */
  readonly lastRoundResult: readonly ToolExecutionRecord[];
  readonly roundIndex: number;
  readonly maxRounds: number;
  /** Why the planner's previous answer in this round was not a plan, for it to correct. */
  readonly planError?: string;
}

const PLANNER_INSTRUCTIONS = `You plan tool calls for a request. Each round you decide one of:
- "execute": run the tools in executionCommands (they run concurrently, so list only calls that do not depend on each other's results), then plan again with their results;
- "response": stop; the request can be answered from what is known now.
Answer with one JSON object and nothing else, writing nextAction first:
{"nextAction": "execute" | "response", "executionCommands": [{"purpose": "why this call", "toolName": "one of availableTools", "toolKwargs": {arguments matching the tool's inputSchema}, "todoSuggestion": "what to do with the result"}]}
Do not repeat a call whose result is already in donePlans. Choose "response" when roundIndex reaches maxRounds or no tool helps.`;

/** The default planner's request: its instructions, then the round's context as JSON. */
export function plannerMessages(context: PlannerContext): Message[] {
  return [
    systemMessage(PLANNER_INSTRUCTIONS),
    userMessage(JSON.stringify(context, attachmentsAsSummaries, 2)),
  ];
}

/**
 * A record's attachments as what they are (type, name, size), not their base64: a planner
 * decides which tools to call next, and the bytes as JSON text would only cost tokens. The
 * final response is sent them as attachments (responseMessages).
 */
function attachmentsAsSummaries(this: unknown, key: string, value: unknown): unknown {
  if (key !== 'attachments' || !Array.isArray(value)) return value;
  return value.map((item) =>
    typeof item === 'object' && item !== null && 'mediaType' in item
      ? summarizeAttachment(item as Parameters<typeof summarizeAttachment>[0])
      : item,
  );
}

/**
 * The plan's JSON Schema as a `json_schema` response format. `nextAction` is the first
 * property, so a model that writes properties in schema order decides before the body,
 * which is what the instant short-circuit (SPEC T5) reads.
 */
export function planResponseFormat(tools: readonly ToolSpec[]): ResponseFormat {
  return {
    type: 'json_schema',
    name: 'tool_loop_plan',
    description: 'The next action of a tool loop and the tool calls of its next round.',
    schema: {
      type: 'object',
      properties: {
        nextAction: { type: 'string', enum: ['execute', 'response'] },
        executionCommands: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              purpose: { type: 'string' },
              toolName: { type: 'string', enum: tools.map((tool) => tool.name) },
              toolKwargs: { type: 'object' },
              todoSuggestion: { type: 'string' },
            },
            required: ['purpose', 'toolName', 'toolKwargs', 'todoSuggestion'],
          },
        },
      },
      required: ['nextAction', 'executionCommands'],
    },
  };
}
