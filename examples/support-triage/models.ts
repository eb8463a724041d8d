// Scripted stand-ins for the three models, for one realistic ticket. They answer from what
// they are sent, as a real model would: the researcher plans from the ticket and from each
// round's tool records, and the writer drafts from the findings and the reviewer's notes.
import type { ModelRequest, PlannerContext, ToolExecutionRecord } from 'statecraft';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import type { TriageModels } from './agents.js';
import type { Ticket } from './machine.js';

export const sampleTicket: Ticket = {
  id: 'T-5017',
  customer: 'dana@example.com',
  subject: 'Charged twice this month',
  body: 'Hi, my card was charged twice for order A-1043 this month ($29 each). Please refund one of them. Dana',
};

const userText = (request: ModelRequest) =>
  request.messages
    .toArray()
    .flatMap((m) => (m.role === 'user' ? [m.content] : []))
    .join('\n');

/** The classifier answers in prose around the JSON, which the chain finds and validates. */
const classifierScript: ScriptedTurn[] = [
  {
    text: 'A billing problem, and the customer is out of pocket, so it is urgent.\n```json\n{"category": "billing", "urgency": "high", "summary": "Charged twice for order A-1043; wants the duplicate refunded."}\n```',
  },
];

/** The researcher's plan for a round, drawn from the ticket and the records of the round before. */
function plan(context: PlannerContext): ScriptedTurn {
  const command = (purpose: string, toolName: string, toolKwargs: object) => ({
    purpose,
    toolName,
    toolKwargs,
    todoSuggestion: '',
  });
  const execute = (...commands: object[]) => ({
    text: JSON.stringify({ nextAction: 'execute', executionCommands: commands }),
  });
  const last: readonly ToolExecutionRecord[] = context.lastRoundResult;
  if (context.roundIndex === 0) {
    const orderId = /\b[A-Z]-\d{3,}\b/.exec(context.userInput)?.[0];
    const summary = /Triage: (.*)/.exec(context.userInput)?.[1] ?? context.userInput;
    // Two independent calls: the loop runs them concurrently.
    return execute(
      ...(orderId ? [command(`Look up order ${orderId}`, 'lookup_order', { orderId })] : []),
      command('Search the knowledge base', 'search_kb', { query: summary }),
    );
  }
  const hits = last.find((r) => r.toolName === 'search_kb')?.result as { id: string }[] | undefined;
  if (hits?.[0]) return execute(command(`Read ${hits[0].id}`, 'read_article', { id: hits[0].id }));
  return { text: JSON.stringify({ nextAction: 'response', executionCommands: [] }) };
}

interface Charge {
  readonly id: string;
  readonly date: string;
  readonly usd: number;
}

/** The first `{ … \n}` block of a note, found by indexOf: linear, unlike a lazy regex (SPEC Q1). */
function firstBlock(text: string): string {
  const start = text.indexOf('{');
  const end = start < 0 ? -1 : text.indexOf('\n}', start + 1);
  return end < 0 ? '{}' : text.slice(start, end + 2);
}

/** The researcher's findings, citing the action results the loop injected (SPEC T8). */
function findings(request: ModelRequest): ScriptedTurn {
  const note = request.messages.toArray().find((m) => m.role === 'system')?.content ?? '';
  const results: Record<string, unknown> = JSON.parse(firstBlock(note));
  const lines: string[] = [];
  for (const [key, value] of Object.entries(results)) {
    if (key.startsWith('Look up order')) {
      const order = value as { orderId: string; plan: string; charges: Charge[] };
      const { charges } = order;
      lines.push(
        `Order ${order.orderId} (${order.plan}) has ${charges.length} charges of $${charges[0]?.usd} on ${charges[0]?.date}: ${charges.map((c) => c.id).join(' and ')} [${key}].`,
      );
    }
    if (key.startsWith('Read ')) lines.push(`${value} [${key}]`);
  }
  return { text: lines.join('\n') || 'Nothing relevant was found.' };
}

/** The writer drafts from the prompt's findings, and adds what each reviewer note asks for. */
function write(request: ModelRequest): ScriptedTurn {
  const prompt = userText(request);
  const name = /from (\w+)@/.exec(prompt)?.[1] ?? 'there';
  const greeting = `Hi ${name[0]?.toUpperCase()}${name.slice(1)},`;
  const charges = /Order (\S+) .* charges of (\$\d+) on ([\d-]+): \w+ and (\w+)/.exec(prompt);
  const body = charges
    ? `sorry about the double charge on order ${charges[1]}: you were charged ${charges[2]} twice on ${charges[3]}. We are refunding the duplicate charge (${charges[4]}).`
    : 'thanks for your question; here is how to do it.';
  const notes = /Reviewer notes:\n([\s\S]*)$/.exec(prompt)?.[1] ?? '';
  const arrival = /within ([\d-]+ business days)/.exec(prompt)?.[1];
  const extra =
    /when/i.test(notes) && arrival ? ` The refund reaches your card within ${arrival}.` : '';
  return { text: `${greeting} ${body}${extra} Best regards, Support` };
}

/** Fresh models for one run of the sample ticket; each records the requests it was sent. */
export function createScriptedModels() {
  return {
    classifier: new ScriptedModel(classifierScript),
    // The default planner asks for a JSON plan (a json_schema response format); the final
    // response is a plain request.
    researcher: new ScriptedModel((request) =>
      request.responseFormat?.type === 'json_schema'
        ? plan(JSON.parse(userText(request)))
        : findings(request),
    ),
    writer: new ScriptedModel(write),
  } satisfies TriageModels;
}
