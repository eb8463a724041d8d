// The app's own statechart (SPEC R5): a support ticket is classified by a chain with
// structured output, researched by a tool loop, answered by a drafting chain, and sent only
// after a human approves the draft. The three agents are invoked child actors; this machine
// decides only what happens between them, with named guards and actions, so the whole flow
// renders in the Stately inspector and its paths can be generated as tests. An agent that
// does not answer in time (a provider that hangs) hands the ticket to a person: an `after`
// on each agent's state, which also stops the agent and so cancels its calls.
//
// Every agent ends the same way, whether invoked as its machine or durably (`durable(store)`,
// so a persisted ticket resumes its agents from their journals): `onDone` with the run's
// output, and a failed run is that output with `status: 'failed'` (`isFailedRun`,
// `runFailure`). `onError` is only an agent this process could not bring to an end.
import type {
  Chain,
  ChainOutput,
  ChainRunInput,
  JournalStore,
  ToolLoop,
  ToolLoopOutput,
  ToolLoopRunInput,
} from 'statecraft';
import { isFailedRun, runFailure, systemMessage, userMessage } from 'statecraft';
import { assign, setup } from 'xstate';
import { z } from 'zod';

/** What the classification chain must answer; the chain validates it (SPEC C6). */
export const triageSchema = z.object({
  category: z.enum(['billing', 'bug', 'how-to']),
  urgency: z.enum(['low', 'high']),
  summary: z.string().min(1),
});
export type Triage = z.infer<typeof triageSchema>;

export interface Ticket {
  readonly id: string;
  readonly customer: string;
  readonly subject: string;
  readonly body: string;
}

export interface TriageInput {
  readonly ticket: Ticket;
  /** REVISE requests the reviewer may make before a further one escalates (default 2). */
  readonly maxRevisions?: number;
  /** Milliseconds each agent (classify, research, draft) may take before escalation (default 120000). */
  readonly agentTimeoutMs?: number;
}

/** The human reviewer's answers to a draft. */
export type TriageEvent =
  | { readonly type: 'APPROVE'; readonly reviewer: string }
  | { readonly type: 'REVISE'; readonly notes: string }
  | { readonly type: 'REJECT'; readonly reason: string };

/** Plain JSON at every state: a waiting ticket can be persisted while nobody reviews it. */
export interface TriageContext {
  readonly ticket: Ticket;
  readonly maxRevisions: number;
  readonly agentTimeoutMs: number;
  readonly triage: Triage | undefined;
  /** What the chains cached for the chains after them (SPEC C9): triage fields, then the reply. */
  readonly intermediateResults: Readonly<Record<string, unknown>>;
  /** The research loop's answer; undefined when research was skipped. */
  readonly findings: string | undefined;
  readonly draft: string | undefined;
  readonly revisions: number;
  /** Every REVISE note so far: the next draft must address them all. */
  readonly notes: readonly string[];
  /** How many of `notes` the current draft was written with; the rest it does not address. */
  readonly notesAddressed: number;
  /** Set by APPROVE only, so `sent` without a reviewer is a bug the path tests would catch. */
  readonly reviewedBy: string | undefined;
  readonly escalation: string | undefined;
}

export type TriageOutput =
  | {
      readonly status: 'sent';
      readonly ticketId: string;
      readonly triage: Triage;
      readonly reply: string;
      readonly revisions: number;
      readonly reviewedBy: string;
      readonly intermediateResults: Readonly<Record<string, unknown>>;
    }
  | {
      readonly status: 'escalated';
      readonly ticketId: string;
      readonly reason: string;
      readonly triage: Triage | undefined;
      /** The last draft written, if any: `openNotes` says what it does not address yet. */
      readonly draft: string | undefined;
      /**
       * The reviewer's notes the draft does not address: those of a redraft that failed or
       * timed out, or of a REVISE past the limit. What the person taking over must change.
       */
      readonly openNotes: readonly string[];
    };

export interface TriageAgents {
  readonly classify: Chain<Triage>;
  readonly research: ToolLoop;
  readonly draft: Chain<string>;
}

export interface TriageMachineOptions {
  /**
   * Runs every agent durably in this store (`durable(store)`), under run ids made from the
   * ticket's id: a ticket persisted mid-run and restored resumes its agents from their
   * journals without repeating a finished call. The machine reads their outputs the same.
   */
  readonly store?: JournalStore;
}

/**
 * The classification as its type. `Chain<Triage>.machine` outputs `ChainOutput`, whose
 * `result` is `unknown` whatever the chain's T; the chain already validated it against this
 * schema, so parsing again only recovers the static type (and would turn a mismatch into a
 * failure instead of a bad cast).
 */
export function triageOf(output: ChainOutput): Triage | undefined {
  if (output.status !== 'succeeded') return undefined;
  const parsed = triageSchema.safeParse(output.result);
  return parsed.success ? parsed.data : undefined;
}

/** `MODEL_ERROR: the provider is down`: the failed run's error, as invoke() would throw it. */
function failureOf(output: ChainOutput | ToolLoopOutput): string {
  const failure = runFailure(output);
  return failure ? `${failure.code}: ${failure.message}` : '';
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `1 revision`, `2 revisions`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** An agent's state ends after context.agentTimeoutMs: the ticket goes to a person. */
function timeout(agent: string) {
  return {
    agentTimeout: {
      target: 'escalated' as const,
      actions: {
        type: 'escalate' as const,
        params: ({ context }: { context: TriageContext }) => ({
          reason: `${agent} did not answer within ${context.agentTimeoutMs} ms`,
        }),
      },
    },
  };
}

const DRAFT_INSTRUCTIONS =
  'You write replies to customer support tickets: short, friendly, concrete. State only what ' +
  'the research findings support, and address every reviewer note.';

/** The drafting chain's request: the ticket, its triage, the findings and the reviewer's notes. */
function draftPrompt(context: TriageContext): string {
  const { ticket, triage, findings, draft, notes } = context;
  return [
    `Ticket ${ticket.id} from ${ticket.customer}: ${ticket.subject}`,
    ticket.body,
    `Triage: ${triage?.category}, ${triage?.urgency} urgency. ${triage?.summary}`,
    `Research findings:\n${findings ?? '(none: answer from the product documentation)'}`,
    ...(draft ? [`Previous draft:\n${draft}`] : []),
    ...(notes.length ? [`Reviewer notes:\n${notes.map((n) => `- ${n}`).join('\n')}`] : []),
  ].join('\n\n');
}

export function createTriageMachine(
  { classify, research, draft }: TriageAgents,
  { store }: TriageMachineOptions = {},
) {
  // What each state invokes: the agent's machine with its input, or its durable actor with
  // `{ runId, input }`. Both end with the same output, read below by the same transitions.
  const classifyRun = (ticket: Ticket, input: string) =>
    store ? { runId: `${ticket.id}.classify`, input } : classify.input(input);
  const researchRun = (ticket: Ticket, input: ToolLoopRunInput) =>
    store ? { runId: `${ticket.id}.research`, input } : research.input(input);
  // Each draft is a run of its own: a redraft is not the first draft resumed.
  const draftRun = (ticket: Ticket, revision: number, input: ChainRunInput) =>
    store ? { runId: `${ticket.id}.draft-${revision}`, input } : draft.input(input);
  return setup({
    types: {
      input: {} as TriageInput,
      context: {} as TriageContext,
      events: {} as TriageEvent,
      output: {} as TriageOutput,
    },
    actors: {
      classifyTicket: store ? classify.durable(store) : classify.machine,
      researchTicket: store ? research.durable(store) : research.machine,
      draftReply: store ? draft.durable(store) : draft.machine,
    },
    guards: {
      // A chain or loop that fails ends in its final state with the failure as data.
      classificationFailed: (_, { output }: { output: ChainOutput }) =>
        triageOf(output) === undefined,
      isHowTo: (_, { output }: { output: ChainOutput }) => triageOf(output)?.category === 'how-to',
      researchFailed: (_, { output }: { output: ToolLoopOutput }) => isFailedRun(output),
      draftFailed: (_, { output }: { output: ChainOutput }) => isFailedRun(output),
      canRevise: ({ context }) => context.revisions < context.maxRevisions,
    },
    delays: { agentTimeout: ({ context }) => context.agentTimeoutMs },
    actions: {
      recordTriage: assign((_, { output }: { output: ChainOutput }) => ({
        triage: triageOf(output),
        intermediateResults: output.intermediateResults,
      })),
      recordFindings: assign((_, { output }: { output: ToolLoopOutput }) => {
        if (output.status !== 'done') return {};
        // The loop's answer cites its sources; without a final response, the results
        // themselves; with neither, no findings (the draft says it has none).
        const text = output.response?.text;
        if (text?.trim()) return { findings: text };
        const results = output.convergence?.actionResults ?? {};
        const found = Object.keys(results).length > 0;
        return { findings: found ? JSON.stringify(results, null, 2) : undefined };
      }),
      recordDraft: assign(({ context }, { output }: { output: ChainOutput }) =>
        output.status === 'succeeded'
          ? {
              draft: output.text,
              notesAddressed: context.notes.length,
              intermediateResults: output.intermediateResults,
            }
          : {},
      ),
      recordRevisionNotes: assign(({ context }, { notes }: { notes: string }) => ({
        revisions: context.revisions + 1,
        notes: [...context.notes, notes],
      })),
      // Past the limit the notes are not a revision, but the person taking over needs them.
      recordOpenNotes: assign(({ context }, { notes }: { notes: string }) => ({
        notes: [...context.notes, notes],
      })),
      recordApproval: assign((_, { reviewer }: { reviewer: string }) => ({ reviewedBy: reviewer })),
      escalate: assign((_, { reason }: { reason: string }) => ({ escalation: reason })),
    },
  }).createMachine({
    id: 'supportTriage',
    context: ({ input }) => ({
      ticket: input.ticket,
      maxRevisions: input.maxRevisions ?? 2,
      agentTimeoutMs: input.agentTimeoutMs ?? 120_000,
      triage: undefined,
      intermediateResults: {},
      findings: undefined,
      draft: undefined,
      revisions: 0,
      notes: [],
      notesAddressed: 0,
      reviewedBy: undefined,
      escalation: undefined,
    }),
    initial: 'classifying',
    states: {
      classifying: {
        invoke: {
          id: 'classify',
          src: 'classifyTicket',
          input: ({ context: { ticket } }) =>
            classifyRun(ticket, `Ticket ${ticket.id}: ${ticket.subject}\n\n${ticket.body}`),
          onDone: [
            {
              guard: {
                type: 'classificationFailed',
                params: ({ event }) => ({ output: event.output }),
              },
              target: 'escalated',
              actions: {
                type: 'escalate',
                params: ({ event }) => ({
                  reason: `classification failed (${failureOf(event.output) || 'no valid triage'})`,
                }),
              },
            },
            // A how-to question needs no order or account data: straight to the reply.
            {
              guard: { type: 'isHowTo', params: ({ event }) => ({ output: event.output }) },
              target: 'drafting',
              actions: { type: 'recordTriage', params: ({ event }) => ({ output: event.output }) },
            },
            {
              target: 'researching',
              actions: { type: 'recordTriage', params: ({ event }) => ({ output: event.output }) },
            },
          ],
          // Not a failed run (that is data, above): an agent that could not end its run here.
          onError: {
            target: 'escalated',
            actions: {
              type: 'escalate',
              params: ({ event }) => ({ reason: `classifier crashed: ${errorText(event.error)}` }),
            },
          },
        },
        after: timeout('the classifier'),
      },
      researching: {
        invoke: {
          id: 'research',
          src: 'researchTicket',
          input: ({ context: { ticket, triage } }) =>
            researchRun(ticket, {
              userInput: `${ticket.subject}\n\n${ticket.body}\n\nTriage: ${triage?.summary}`,
              extraRequirement: 'Find the facts a support agent needs to answer this ticket.',
            }),
          onDone: [
            {
              guard: { type: 'researchFailed', params: ({ event }) => ({ output: event.output }) },
              target: 'escalated',
              actions: {
                type: 'escalate',
                params: ({ event }) => ({ reason: `research failed (${failureOf(event.output)})` }),
              },
            },
            {
              target: 'drafting',
              actions: {
                type: 'recordFindings',
                params: ({ event }) => ({ output: event.output }),
              },
            },
          ],
          onError: {
            target: 'escalated',
            actions: {
              type: 'escalate',
              params: ({ event }) => ({ reason: `research crashed: ${errorText(event.error)}` }),
            },
          },
        },
        after: timeout('research'),
      },
      drafting: {
        invoke: {
          id: 'draft',
          src: 'draftReply',
          input: ({ context }) =>
            draftRun(context.ticket, context.revisions, {
              messages: [systemMessage(DRAFT_INSTRUCTIONS), userMessage(draftPrompt(context))],
              // SPEC C9: the classification's cached results flow on; the reply joins them.
              intermediateResults: context.intermediateResults,
            }),
          onDone: [
            {
              guard: { type: 'draftFailed', params: ({ event }) => ({ output: event.output }) },
              target: 'escalated',
              actions: {
                type: 'escalate',
                params: ({ event }) => ({ reason: `drafting failed (${failureOf(event.output)})` }),
              },
            },
            {
              target: 'awaitingReview',
              actions: { type: 'recordDraft', params: ({ event }) => ({ output: event.output }) },
            },
          ],
          onError: {
            target: 'escalated',
            actions: {
              type: 'escalate',
              params: ({ event }) => ({ reason: `drafting crashed: ${errorText(event.error)}` }),
            },
          },
        },
        after: timeout('the writer'),
      },
      // Nothing is sent without a human: the machine waits here for the reviewer's event.
      awaitingReview: {
        on: {
          APPROVE: {
            target: 'sent',
            actions: {
              type: 'recordApproval',
              params: ({ event }) => ({ reviewer: event.reviewer }),
            },
          },
          REVISE: [
            {
              guard: 'canRevise',
              target: 'drafting',
              actions: {
                type: 'recordRevisionNotes',
                params: ({ event }) => ({ notes: event.notes }),
              },
            },
            // Revising forever helps nobody: past the limit a person takes the ticket over.
            {
              target: 'escalated',
              actions: [
                { type: 'recordOpenNotes', params: ({ event }) => ({ notes: event.notes }) },
                {
                  type: 'escalate',
                  params: ({ context }) => ({
                    reason: `still not approved after ${count(context.maxRevisions, 'revision')}`,
                  }),
                },
              ],
            },
          ],
          REJECT: {
            target: 'escalated',
            actions: {
              type: 'escalate',
              params: ({ event }) => ({ reason: `rejected by the reviewer: ${event.reason}` }),
            },
          },
        },
      },
      sent: { type: 'final' },
      escalated: { type: 'final' },
    },
    output: ({ context }): TriageOutput => {
      const { ticket, triage, draft: reply, reviewedBy, escalation } = context;
      if (escalation === undefined && triage && reply !== undefined && reviewedBy !== undefined) {
        return {
          status: 'sent',
          ticketId: ticket.id,
          triage,
          reply,
          revisions: context.revisions,
          reviewedBy,
          intermediateResults: context.intermediateResults,
        };
      }
      return {
        status: 'escalated',
        ticketId: ticket.id,
        reason: escalation ?? 'ended without an approved reply',
        triage,
        draft: reply,
        openNotes: context.notes.slice(context.notesAddressed),
      };
    },
  });
}

export type TriageMachine = ReturnType<typeof createTriageMachine>;
