import { ConfigError } from '../errors.js';
import type { OptionContext, OptionSpec, OptionsDescription, Specs } from '../options/describe.js';
import { type Extra, satisfies } from '../options/kinds.js';
import { SIGNATURE_HEADER } from './credential.js';

// The kinds of options statecraft/restate's functions share, for their descriptions (see
// src/options/describe.ts: every bad option named at once, an unknown one with the nearest
// known name).

const HTTP_ADDRESS = /^https?:\/\/[^\s/]+/;

/**
 * Checks `options` against `description`, every problem at once; the defaults applied. The
 * message for a value that is no object lists the keys, in the description's order.
 */
export function parseOptions<S extends Specs>(
  description: OptionsDescription<S>,
  options: unknown,
): ReturnType<OptionsDescription<S>['parse']> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const { where, keys } = description;
    throw new ConfigError('options', `${where} takes an object { ${keys.join(', ')} }`);
  }
  return description.parse(options);
}

/** An http(s) address such as `example`: required unless the extra gives a default text. */
export function address(example: string, extra: Extra<string> = {}): OptionSpec<string> {
  return satisfies<string>(
    (value) => typeof value === 'string' && HTTP_ADDRESS.test(value),
    (value) => `must be an http(s) address such as ${example}; got ${String(value)}`,
    extra,
  );
}

/** A positive number of milliseconds. */
export function milliseconds<const D extends number | undefined = undefined>(
  extra: Extra<number, D> = {},
) {
  return satisfies<number, D>(
    (value) => typeof value === 'number' && Number.isFinite(value) && value > 0,
    (value) => `must be a positive number of milliseconds; got ${String(value)}`,
    extra,
  );
}

/** A TCP port (0: any free one). */
export function port<const D extends number | undefined = undefined>(extra: Extra<number, D> = {}) {
  return satisfies<number, D>(
    (value) => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65_535,
    (value) => `must be a port number 0–65535; got ${String(value)}`,
    extra,
  );
}

/** Headers statecraft sets itself on every request: a `headers` option may not replace them. */
const OWN_HEADERS = ['content-type', 'content-length', 'host', SIGNATURE_HEADER];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Extra headers for every request to Restate (e.g. `authorization` for Restate Cloud or a
 * proxy in front of the server): names and string values that HTTP allows, each bad one
 * named by its path (`headers.host`).
 */
export function headers(): OptionSpec<Readonly<Record<string, string>>> {
  return {
    check: (value: unknown, at: OptionContext) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        at.problem(`must be an object of header names to string values; got ${String(value)}`);
        return undefined;
      }
      const before = at.problems.size;
      for (const [name, header] of Object.entries(value)) {
        if (!HEADER_NAME.test(name)) {
          at.problem('is not a valid HTTP header name', `${at.name}.${name}`);
        } else if (OWN_HEADERS.includes(name.toLowerCase())) {
          at.problem('is set by statecraft itself', `${at.name}.${name}`);
        } else if (typeof header !== 'string' || /[\r\n\0]/.test(header)) {
          at.problem('must be a string without line breaks', `${at.name}.${name}`);
        }
      }
      return at.problems.size === before ? (value as Record<string, string>) : undefined;
    },
  };
}
