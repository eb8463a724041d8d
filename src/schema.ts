import { z } from 'zod';
import type { JsonSchema } from './model/language-model.js';

/**
 * JSON Schema for a zod schema, as providers expect it for tool parameters. zod 4's own
 * `z.toJSONSchema` is used: `zod-to-json-schema` returns an empty schema for zod 4 types.
 * The `$schema` key is dropped because several providers reject unknown top-level keys.
 */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * True for zod 4 schemas (the only schema kind `defineTool` accepts today). Checked by shape,
 * not `instanceof`, so schemas from another copy of zod in the same process are accepted.
 */
export function isZodSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === 'object' &&
    value !== null &&
    '_zod' in value &&
    typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

/** A validation failure as one readable text, one line per issue with its path. */
export function formatZodError(error: z.ZodError): string {
  return z.prettifyError(error);
}
