import type { ToolCall, ToolResult } from '../src/messages.js';

// The chain's policy as tiny pure predicates. The machine's named guards call these; tests
// and graph properties can call them too. Nothing here waits or does IO.

/** A warning threshold: >= 0 is absolute; negative means "this far from the limit". */
export function warningPoint(limit: number, threshold: number): number {
  return threshold >= 0 ? threshold : limit + threshold;
}

export function isOverIterationLimit(iterations: number, maxIterations: number): boolean {
  return iterations >= maxIterations;
}

/** Over the run's budget: spent strictly more than `maxTokens`. */
export function isOverTokenLimit(totalTokens: number, maxTokens: number): boolean {
  return totalTokens > maxTokens;
}

/** Room for another model call: a run that has spent its whole budget cannot think again. */
export function hasTokenBudget(totalTokens: number, maxTokens: number): boolean {
  return totalTokens < maxTokens;
}

/**
 * A canonical text for a call's name and arguments: key order does not matter, so two calls
 * with deeply equal arguments get the same key. Never throws, whatever a custom model put in
 * the arguments: a BigInt is written `<digits>n` (no JSON value looks like that, so `1n` and
 * `"1"` stay apart), an object inside itself `[Circular]`, an unreadable property
 * `[unreadable]`.
 */
export function callKey(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  return `${call.name}:${stableStringify(call.arguments, new Set())}`;
}

function stableStringify(value: unknown, ancestors: Set<object>): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (!value || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (ancestors.has(value)) return '[Circular]';
  ancestors.add(value);
  try {
    if (Array.isArray(value))
      return `[${value.map((v) => stableStringify(v, ancestors)).join(',')}]`;
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v, ancestors)}`).join(',')}}`;
  } catch {
    // A getter or Proxy trap that throws: the key only has to be stable, not complete.
    return '[unreadable]';
  } finally {
    ancestors.delete(value);
  }
}

export interface DuplicateCheck {
  /** Keys of calls already executed in this run. */
  readonly history: readonly string[];
  /** Keys warned about in the previous tool step: repeating one of them now executes it. */
  readonly warned: readonly string[];
  /** Names of tools that opted in with `duplicateCallWarn`. */
  readonly warnTools: readonly string[];
}

/**
 * SPEC C8: a call of an opted-in tool that repeats an earlier call of this run exactly is
 * blocked once; repeated right after the warning, it runs.
 */
export function isDuplicateCall(call: ToolCall, check: DuplicateCheck): boolean {
  if (!check.warnTools.includes(call.name)) return false;
  const key = callKey(call);
  return check.history.includes(key) && !check.warned.includes(key);
}

/**
 * The calls to run, in order, and the ones to answer with a warning instead (SPEC C8). A call
 * repeats an earlier one of this run, or of this same response.
 */
export function planDuplicateCalls(
  calls: readonly ToolCall[],
  check: DuplicateCheck,
): { readonly blocked: readonly ToolCall[]; readonly history: readonly string[] } {
  const history = [...check.history];
  const blocked: ToolCall[] = [];
  for (const call of calls) {
    if (isDuplicateCall(call, { ...check, history })) blocked.push(call);
    // Only opted-in tools are ever checked, so only their calls are remembered.
    else if (check.warnTools.includes(call.name)) history.push(callKey(call));
  }
  return { blocked, history };
}

/**
 * Calls with ids the transcript can link results to: a missing id, or one already used in
 * the response, gets a new one. Deterministic (derived from the generation and position), so
 * the machine stays replayable.
 */
export function withUniqueIds(calls: readonly ToolCall[], generation: number): readonly ToolCall[] {
  if (calls.length === 0 || (calls.length === 1 && calls[0]?.id)) return calls;
  const seen = new Set<string>();
  let changed = false;
  const fixed = calls.map((call, index) => {
    let id = call.id;
    if (!id || seen.has(id)) {
      id = `call_${generation}_${index}`;
      while (seen.has(id)) id = `${id}_`;
      changed = true;
    }
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
  return changed ? fixed : calls;
}

/** The result the model gets instead of running a blocked duplicate call. */
export function duplicateCallResult(call: ToolCall): ToolResult {
  return {
    toolCallId: call.id,
    name: call.name,
    output: null,
    success: false,
    error:
      `Not executed: '${call.name}' was already called with these exact arguments in this run, ` +
      'and its result is above. If you really need to run it again, repeat the same call in your next step.',
  };
}
