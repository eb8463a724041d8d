import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { JsonSchema, ResponseFormat } from '../model/language-model.js';
import { isZodSchema, toJsonSchema } from '../schema.js';

/** The Standard Schema interface (zod, valibot, arktype…), as far as validation needs it. */
export interface StandardSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
  };
}

type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: readonly { readonly message: string; readonly path?: readonly unknown[] }[];
    };

/** What `outputSchema` accepts: a zod schema, any Standard Schema, or a JSON Schema object. */
export type OutputSchema = StandardSchema | JsonSchema;

export interface StructuredOutput {
  /** The response format the model is asked for (`json_schema` when a JSON Schema is known). */
  readonly responseFormat: ResponseFormat;
  readonly validate: (
    value: unknown,
  ) => Promise<{ ok: true; value: unknown } | { ok: false; issues: string[] }>;
}

function isStandardSchema(value: unknown): value is StandardSchema {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { '~standard'?: { validate?: unknown } })['~standard']?.validate === 'function'
  );
}

/**
 * Prepares an `outputSchema` (SPEC C6): the response format derived from it and a validator.
 * JSON Schema objects are validated through zod's `z.fromJSONSchema`.
 */
export function structuredOutput(schema: OutputSchema, name = 'result'): StructuredOutput {
  let standard: StandardSchema;
  let jsonSchema: JsonSchema | undefined;
  if (isZodSchema(schema)) {
    standard = schema as unknown as StandardSchema;
    try {
      jsonSchema = toJsonSchema(schema);
    } catch (error) {
      throw new ConfigError('outputSchema', `has no JSON Schema form: ${(error as Error).message}`);
    }
  } else if (isStandardSchema(schema)) {
    standard = schema;
  } else if (typeof schema === 'object' && schema !== null) {
    jsonSchema = schema;
    try {
      standard = z.fromJSONSchema(
        schema as Parameters<typeof z.fromJSONSchema>[0],
      ) as unknown as StandardSchema;
    } catch (error) {
      throw new ConfigError(
        'outputSchema',
        `is not a JSON Schema zod can validate: ${(error as Error).message}`,
      );
    }
  } else {
    throw new ConfigError(
      'outputSchema',
      'must be a zod schema, a Standard Schema or a JSON Schema object',
    );
  }
  const responseFormat: ResponseFormat = jsonSchema
    ? { type: 'json_schema', name, schema: jsonSchema }
    : { type: 'json_object' };
  return {
    responseFormat,
    async validate(value) {
      const result = await standard['~standard'].validate(value);
      if (!result.issues) return { ok: true, value: result.value };
      return {
        ok: false,
        issues: result.issues.map((issue) => {
          const path = (issue.path ?? [])
            .map((p) =>
              typeof p === 'object' && p !== null && 'key' in p ? String(p.key) : String(p),
            )
            .join('.');
          return path ? `${path}: ${issue.message}` : issue.message;
        }),
      };
    },
  };
}

/** For `json_object`: any JSON value passes. */
export const anyJson: StructuredOutput = {
  responseFormat: { type: 'json_object' },
  validate: async (value) => ({ ok: true, value }),
};
