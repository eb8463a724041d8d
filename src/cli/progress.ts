import type { ToolResult } from '../messages.js';
import type { ModelResponse } from '../model/language-model.js';
import type {
  ObservedModelCall,
  ObservedRun,
  ObservedToolCall,
  RunObserver,
} from '../observe/run-observer.js';
import type { Usage } from '../usage.js';

// The progress of the runs a `statecraft run` example makes, from the runs' own events (the
// RunObserver hooks every chain, tool loop and Runnable reports to): state changes, model
// calls with their tokens, tool calls and their outcome, each run's end. On a terminal one
// status line is redrawn in place and only run ends stay; elsewhere (a pipe, CI, a log)
// every event is one plain line. Progress goes to stderr, the example's own output to stdout.

export interface ProgressOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface ProgressTotals {
  readonly runs: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly failedToolCalls: number;
  readonly tokens: number;
}

interface RunState {
  readonly label: string;
  state: string;
  modelCalls: number;
  toolCalls: number;
  tokens: number;
}

export class ProgressDisplay implements RunObserver {
  readonly #out: ProgressOutput;
  readonly #live: boolean;
  readonly #runs = new Map<string, RunState>();
  readonly #counts = new Map<string, number>();
  #totals = { runs: 0, modelCalls: 0, toolCalls: 0, failedToolCalls: 0, tokens: 0 };
  /** The status line now on screen (TTY only), to clear before anything else is written. */
  #status = '';

  constructor(out: ProgressOutput) {
    this.#out = out;
    this.#live = out.isTTY === true;
  }

  get totals(): ProgressTotals {
    return { ...this.#totals };
  }

  onRunStart(run: ObservedRun): void {
    const n = (this.#counts.get(run.name) ?? 0) + 1;
    this.#counts.set(run.name, n);
    const label = `${run.name}#${n}`;
    this.#runs.set(run.runId, { label, state: '', modelCalls: 0, toolCalls: 0, tokens: 0 });
    this.#totals.runs++;
    const parent = run.parentRunId ? this.#runs.get(run.parentRunId)?.label : undefined;
    const model = run.model ? ` on ${run.model.provider}/${run.model.modelId}` : '';
    this.#event(`${label} started${parent ? ` in ${parent}` : ''}${model}`, run);
  }

  onState(run: ObservedRun, state: unknown): void {
    const current = this.#runs.get(run.runId);
    const name = typeof state === 'string' ? state : JSON.stringify(state);
    if (!current || current.state === name) return;
    current.state = name;
    this.#event(`${current.label} ${name}`, run);
  }

  onModelCallEnd(
    run: ObservedRun,
    call: ObservedModelCall,
    outcome:
      | { readonly response: ModelResponse; readonly usage: Usage; readonly endTime: number }
      | { readonly error: unknown; readonly endTime: number },
  ): void {
    const current = this.#runs.get(run.runId);
    if (!current) return;
    current.modelCalls++;
    this.#totals.modelCalls++;
    const ms = Math.round(outcome.endTime - call.startTime);
    if ('error' in outcome) {
      this.#event(
        `${current.label} model call ${call.index} failed: ${messageOf(outcome.error)}`,
        run,
      );
      return;
    }
    const { inputTokens, outputTokens, totalTokens } = outcome.usage;
    current.tokens += totalTokens;
    this.#totals.tokens += totalTokens;
    this.#event(
      `${current.label} model call ${call.index} (${call.purpose}): ${totalTokens} tokens (${inputTokens} in, ${outputTokens} out), ${outcome.response.finishReason.unified}, ${ms} ms`,
      run,
    );
  }

  onToolCallEnd(
    run: ObservedRun,
    call: ObservedToolCall,
    outcome: { readonly result: ToolResult; readonly endTime: number },
  ): void {
    const current = this.#runs.get(run.runId);
    if (!current) return;
    current.toolCalls++;
    this.#totals.toolCalls++;
    const { result } = outcome;
    if (!result.success) this.#totals.failedToolCalls++;
    const verdict = result.success ? 'ok' : `error: ${oneLine(result.error ?? 'failed')}`;
    this.#event(`${current.label} tool ${call.call.name} → ${verdict}`, run);
  }

  onRunEnd(
    run: ObservedRun,
    outcome:
      | { readonly output: unknown; readonly endTime: number }
      | { readonly error: unknown; readonly endTime: number },
  ): void {
    const current = this.#runs.get(run.runId);
    if (!current) return;
    const seconds = ((outcome.endTime - run.startTime) / 1000).toFixed(1);
    const how = 'error' in outcome ? `failed: ${messageOf(outcome.error)}` : 'done';
    // A run's end stays on screen, on a terminal too.
    this.#line(
      `${current.label} ${how} (${plural(current.modelCalls, 'model call')}, ${plural(current.toolCalls, 'tool call')}, ${current.tokens} tokens, ${seconds} s)`,
    );
    this.#runs.delete(run.runId);
    this.#redraw();
  }

  /** Clears the status line so that other output (the example's) starts on a clean line. */
  clear(): void {
    if (!this.#live || !this.#status) return;
    this.#out.write('\r\x1b[2K');
    this.#status = '';
  }

  /** Puts the status line back after other output. */
  redraw(): void {
    this.#redraw();
  }

  /** The closing summary line. */
  summary(): string {
    const t = this.#totals;
    const failed = t.failedToolCalls ? ` (${t.failedToolCalls} failed)` : '';
    return `${plural(t.runs, 'run')}, ${plural(t.modelCalls, 'model call')}, ${plural(t.toolCalls, 'tool call')}${failed}, ${t.tokens} tokens`;
  }

  #event(text: string, _run: ObservedRun): void {
    if (this.#live) this.#redraw();
    else this.#out.write(`${text}\n`);
  }

  #line(text: string): void {
    this.clear();
    this.#out.write(`${text}\n`);
  }

  #redraw(): void {
    if (!this.#live) return;
    const active = [...this.#runs.values()];
    if (active.length === 0) {
      this.clear();
      return;
    }
    const parts = active.map(
      (r) =>
        `${r.label} ${r.state || 'starting'} · ${plural(r.modelCalls, 'model call')} · ${r.tokens} tokens`,
    );
    const width = Math.max(20, (this.#out.columns ?? 100) - 1);
    const line = parts.join('  |  ').slice(0, width);
    this.#out.write(`\r\x1b[2K${line}`);
    this.#status = line;
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function oneLine(text: string): string {
  // Each whitespace run that holds a line break becomes one space. Not `/\s*\n\s*/g`: that
  // backtracks quadratically over long runs of spaces, and error messages carry model output.
  const line = text.replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run));
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

function messageOf(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}
