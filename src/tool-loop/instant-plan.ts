import { createRequire } from 'node:module';
import type JSONParser from '@streamparser/json/jsonparser.js';
import type { StreamPart } from '../model/language-model.js';
import type { Usage } from '../usage.js';
import { ZERO_USAGE } from '../usage.js';

export interface StreamedPlan {
  /** The text read: the whole answer, or its start when the plan was decided early. */
  readonly text: string;
  readonly usage: Usage;
  /** True when `nextAction: "response"` arrived first and the rest was never read. */
  readonly shortCircuited: boolean;
}

let loadedParser: typeof JSONParser | undefined;

/**
 * The streaming JSON parser, loaded at the first streamed plan, not with `statecraft` (a chain
 * never parses one). Loaded synchronously (the package's CommonJS build), so the first plan of
 * a process takes the same turns of the event loop as every later one: an `await import()`
 * here let a run's events interleave differently on its first plan.
 */
function streamingParser(): typeof JSONParser {
  loadedParser ??= (
    createRequire(import.meta.url)('@streamparser/json/jsonparser.js') as {
      default: typeof JSONParser;
    }
  ).default;
  return loadedParser;
}

/**
 * Reads a streaming planner's answer (SPEC T5). The text is parsed as it arrives; the first
 * complete top-level `nextAction` (or `next_action`) equal to `response` ends the read at
 * once: the caller's `stop` aborts the provider call, and the body is never awaited. Any
 * other value waits for the whole plan. Prose before the JSON object is skipped; text that
 * is not JSON just disables the early decision, and the full text is parsed as usual.
 */
export async function readPlanStream(
  parts: AsyncIterable<StreamPart>,
  stop: () => void,
): Promise<StreamedPlan> {
  let text = '';
  let usage = ZERO_USAGE;
  let decided: string | undefined;
  let parser: JSONParser | undefined = new (streamingParser())({
    paths: ['$.nextAction', '$.next_action'],
    keepStack: false,
  });
  parser.onValue = ({ value }) => {
    if (decided !== undefined) return;
    const action = typeof value === 'string' ? value.trim().toLowerCase() : '';
    // Anything but a valid action is left to normalizePlan, which reads the whole plan.
    decided = action === 'execute' || action === 'response' ? action : 'undecided';
  };
  parser.onError = () => {
    parser = undefined; // not JSON after all: the full-text parse decides
  };
  let seenObject = false;
  for await (const part of parts) {
    if (part.type === 'usage') usage = part.usage;
    if (part.type !== 'text-delta') continue;
    text += part.delta;
    if (!parser) continue;
    let chunk = part.delta;
    if (!seenObject) {
      const start = chunk.search(/[{[]/);
      if (start < 0) continue;
      if (chunk[start] === '[') {
        parser = undefined; // an array is not a plan: the full-text parse says so
        continue;
      }
      seenObject = true;
      chunk = chunk.slice(start);
    }
    parser.write(chunk);
    if (decided === 'response') {
      stop();
      return { text, usage, shortCircuited: true };
    }
    if (decided !== undefined) parser = undefined; // decided on executing: read the body whole
  }
  return { text, usage, shortCircuited: false };
}
