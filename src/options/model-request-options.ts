import type { ResponseFormat } from '../model/language-model.js';
import type { EveryKeyListed } from './keys.js';
import type { OptionProblems } from './problems.js';

// The check of a response format a factory sends with every model call (a chain's
// `responseFormat`; its `modelSettings` are described with its options). Checked when the
// factory is built, so a typo such as `responseFormat.strikt` is an error then, not a setting
// every provider silently ignores.

type FormatType = ResponseFormat['type'];

/** The keys each kind of response format has. */
const RESPONSE_FORMAT_KEYS = {
  text: ['type'],
  json_object: ['type'],
  json_schema: ['type', 'name', 'schema', 'description', 'strict'],
} as const satisfies {
  readonly [T in FormatType]: readonly (keyof Extract<ResponseFormat, { type: T }>)[];
};

// tsc fails here, naming the key, when a response format gains a key the lists above lack.
const _everyFormatKeyListed: {
  readonly [T in FormatType]: EveryKeyListed<
    Extract<ResponseFormat, { type: T }>,
    (typeof RESPONSE_FORMAT_KEYS)[T]
  >;
} = { text: true, json_object: true, json_schema: true };

/**
 * A ResponseFormat: one of its three types, with that type's keys only. A json_schema
 * format's `name` may be left out (the chain names it); its schema must be an object.
 */
export function checkResponseFormat(
  problems: OptionProblems,
  option: string,
  value: unknown,
): void {
  const format = problems.nested(option, value, RESPONSE_FORMAT_KEYS.json_schema);
  if (format === undefined) return;
  const { type } = format;
  if (type !== 'text' && type !== 'json_object' && type !== 'json_schema') {
    problems.add(
      `${option}.type`,
      `must be 'text', 'json_object' or 'json_schema'; got ${JSON.stringify(type) ?? String(type)}`,
    );
    return;
  }
  if (type !== 'json_schema') {
    // `nested` allowed json_schema's keys (and refused the rest); these types have `type` alone.
    const schemaOnly: readonly string[] = RESPONSE_FORMAT_KEYS.json_schema;
    for (const key of Object.keys(format)) {
      if (key !== 'type' && schemaOnly.includes(key)) {
        problems.add(`${option}.${key}`, `is only for a 'json_schema' format, not '${type}'`);
      }
    }
    return;
  }
  const { name, schema, description, strict } = format;
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    problems.add(`${option}.name`, 'must be a non-empty string');
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    problems.add(`${option}.schema`, "must be a JSON Schema object, e.g. { type: 'object' }");
  }
  if (description !== undefined && typeof description !== 'string') {
    problems.add(`${option}.description`, 'must be a string');
  }
  if (strict !== undefined && typeof strict !== 'boolean') {
    problems.add(`${option}.strict`, `must be true or false; got ${String(strict)}`);
  }
}
