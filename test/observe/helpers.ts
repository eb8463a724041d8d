// A run observer that records what it is told, for the observer and OpenTelemetry tests.
import type { ObservedRun, RunObserver } from 'statecraft';

/** One hook call: which hook, for which run, and what it was given. */
export interface ObservedEvent {
  readonly hook: keyof RunObserver;
  readonly run: ObservedRun;
  readonly input?: unknown;
  readonly state?: unknown;
  readonly call?: unknown;
  readonly outcome?: unknown;
}

/** Every hook, recorded in order; `lines()` gives a readable summary of them. */
export function recordingObserver() {
  const events: ObservedEvent[] = [];
  const observer: RunObserver = {
    onRunStart: (run, input) => events.push({ hook: 'onRunStart', run, input }),
    onState: (run, state) => events.push({ hook: 'onState', run, state }),
    onModelCallStart: (run, call) => events.push({ hook: 'onModelCallStart', run, call }),
    onModelCallEnd: (run, call, outcome) =>
      events.push({ hook: 'onModelCallEnd', run, call, outcome }),
    onToolCallStart: (run, call) => events.push({ hook: 'onToolCallStart', run, call }),
    onToolCallEnd: (run, call, outcome) =>
      events.push({ hook: 'onToolCallEnd', run, call, outcome }),
    onRunEnd: (run, outcome) => events.push({ hook: 'onRunEnd', run, outcome }),
  };
  return { observer, events, lines: () => events.map(line) };
}

function line(event: ObservedEvent): string {
  const who = `${event.run.kind}:${event.run.name}`;
  switch (event.hook) {
    case 'onRunStart':
      return `${who} start`;
    case 'onState':
      return `${who} state ${typeof event.state === 'string' ? event.state : JSON.stringify(event.state)}`;
    case 'onModelCallStart':
    case 'onModelCallEnd': {
      const call = event.call as { index: number; purpose: string };
      const end = event.hook === 'onModelCallEnd' ? ' end' : ' start';
      return `${who} model #${call.index} ${call.purpose}${end}`;
    }
    case 'onToolCallStart':
    case 'onToolCallEnd': {
      const call = event.call as { call: { name: string } };
      return `${who} tool ${call.call.name}${event.hook === 'onToolCallEnd' ? ' end' : ' start'}`;
    }
    case 'onRunEnd':
      return `${who} end${'error' in (event.outcome as object) ? ' with error' : ''}`;
    default:
      return `${who} ${event.hook}`;
  }
}

/** The outcome an end hook was given; fails the test when there is no such event. */
export function outcomeOf<T>(event: ObservedEvent | undefined): T {
  if (event?.outcome === undefined) throw new Error('no such end event was observed');
  return event.outcome as T;
}
