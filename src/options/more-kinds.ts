import { isRecord } from '../is-record.js';
import type { OptionContext, OptionSpec } from './describe.js';
import { type Defaulted, type Extra, satisfies } from './kinds.js';

// Kinds the adapters, stores, MCP, the viewer and Restate's workers share, beside those of
// ./kinds.ts: each words its problem as those factories always have.

type Message = string | ((value: unknown) => string);

/** A non-empty string; refused as `must be a non-empty string` unless `message` words it. */
export function text<const D extends string | undefined = undefined>(
  message: Message = 'must be a non-empty string',
  extra: Extra<string, D> = {},
): OptionSpec<string> & Defaulted<D> {
  return satisfies<string, D>((value) => typeof value === 'string' && value !== '', message, extra);
}

/** A JSON object (not null, not an array), refused with `message`. */
export function record<T extends object = { readonly [key: string]: unknown }>(
  message: Message,
  extra: Extra<T> = {},
): OptionSpec<T> {
  return satisfies<T>(isRecord, message, extra);
}

/** HTTP headers: an object of header names to string values. */
export function headers<T extends object = { readonly [name: string]: string }>(
  extra: Extra<T> = {},
): OptionSpec<T> {
  return satisfies<T>(
    (value) => isRecord(value) && Object.values(value).every((v) => typeof v === 'string'),
    'must be an object of header names to string values',
    extra,
  );
}

/** A string `URL` can parse (an absolute URL), refused with `message`. */
export function absoluteUrl(message: Message, extra: Extra<string> = {}): OptionSpec<string> {
  return satisfies<string>(
    (value) => typeof value === 'string' && URL.canParse(value),
    message,
    extra,
  );
}

/**
 * `spec`, with null taken as not given (its default): for the options a factory always read
 * with `??`, so that describing them changed no behaviour. New options should not use it.
 */
export function nullIsDefault<T, S extends OptionSpec<T>>(spec: S & OptionSpec<T>): S {
  return {
    ...spec,
    check: (value: unknown, at: OptionContext) =>
      value === null ? spec.default : spec.check(value, at),
  };
}
