import { type Attachment, attachmentProblem } from '../attachments.js';
import { InputError } from '../errors.js';

// A tool that returns an image or a file besides its output (a screenshot, a chart, a PDF it
// fetched) returns `toolOutput(output, attachments)`. A marked object rather than a plain
// `{ output, attachments }`: a tool whose ordinary output happens to have those two keys must
// not have it taken apart.

const TOOL_OUTPUT: unique symbol = Symbol.for('statecraft.toolOutput');

/** A tool's output with the images and files that go back to the model with it. */
export interface ToolOutput<Output = unknown> {
  readonly [TOOL_OUTPUT]: true;
  readonly output: Output;
  readonly attachments: readonly Attachment[];
}

/**
 * What a tool's `execute` returns to send images or files back with its output:
 * `return toolOutput({ rows: 3 }, [attachment({ data: png })])`. The model reads the output
 * as it would any result, and the attachments with it, mapped per provider. Throws InputError
 * when an attachment is not one (make them with `attachment()`).
 */
export function toolOutput<Output>(
  output: Output,
  attachments: readonly Attachment[],
): ToolOutput<Output> {
  if (!Array.isArray(attachments))
    throw new InputError('toolOutput(): attachments must be an array of attachment() values');
  for (const [index, item] of attachments.entries()) {
    const problem = attachmentProblem(item);
    if (problem) throw new InputError(`toolOutput(): attachments[${index}] ${problem}`);
  }
  return Object.freeze({
    [TOOL_OUTPUT]: true as const,
    output,
    attachments: Object.freeze([...attachments]),
  });
}

/** True for what `toolOutput()` made. */
export function isToolOutput(value: unknown): value is ToolOutput {
  return typeof value === 'object' && value !== null && (value as ToolOutput)[TOOL_OUTPUT] === true;
}
