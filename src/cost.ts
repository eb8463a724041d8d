import { ConfigError } from './errors.js';
import { isRecord } from './is-record.js';
import type { Usage } from './usage.js';

// SPEC H3: what a run's tokens cost, from prices the user gives. Cost is linear in usage, so
// a run's cost is the price of its summed usage: nothing but the usage needs keeping.

/** A model's prices in US dollars per million tokens. */
export interface ModelPrice {
  readonly inputPerMillion: number;
  /** Input tokens served from the provider's prompt cache; default: `inputPerMillion`. */
  readonly cachedInputPerMillion?: number;
  /** Output tokens, hidden reasoning tokens included (providers count them as output). */
  readonly outputPerMillion: number;
}

/** One price for the chain's model, or a table of prices by model id (`model.modelId`). */
export type ModelPrices = ModelPrice | Readonly<Record<string, ModelPrice>>;

const PRICE_KEYS = ['inputPerMillion', 'cachedInputPerMillion', 'outputPerMillion'] as const;

/** US dollars for `usage` at `price`: cached input at its own price, the rest of the input at the input price. */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const cachedPrice = price.cachedInputPerMillion ?? price.inputPerMillion;
  return (
    ((usage.inputTokens - cached) * price.inputPerMillion +
      cached * cachedPrice +
      usage.outputTokens * price.outputPerMillion) /
    1_000_000
  );
}

/**
 * The price of `modelId` in `prices` (one price, or a table by model id), checked: each price
 * a finite number >= 0, no other keys. Throws a ConfigError naming `option`.
 */
export function priceOf(option: string, prices: unknown, modelId: string): ModelPrice {
  if (!isRecord(prices)) {
    throw new ConfigError(
      option,
      'must be { inputPerMillion, outputPerMillion, cachedInputPerMillion? } (US dollars per million tokens), or such prices by model id',
    );
  }
  if ('inputPerMillion' in prices || 'outputPerMillion' in prices)
    return checkedPrice(option, prices);
  const own = prices[modelId];
  if (own === undefined) {
    const known = Object.keys(prices);
    throw new ConfigError(
      option,
      `has no price for the model '${modelId}'${known.length ? `; it prices ${known.map((id) => `'${id}'`).join(', ')}` : ''}`,
    );
  }
  return checkedPrice(`${option}.${modelId}`, own);
}

function checkedPrice(option: string, price: unknown): ModelPrice {
  if (!isRecord(price)) {
    throw new ConfigError(
      option,
      'must be { inputPerMillion, outputPerMillion, cachedInputPerMillion? }',
    );
  }
  const unknown = Object.keys(price).filter(
    (key) => !(PRICE_KEYS as readonly string[]).includes(key),
  );
  if (unknown.length) {
    throw new ConfigError(
      option,
      `has unknown key(s) ${unknown.map((k) => `\`${k}\``).join(', ')}; a price has ${PRICE_KEYS.join(', ')}`,
    );
  }
  for (const key of PRICE_KEYS) {
    const value = price[key];
    if (value === undefined && key === 'cachedInputPerMillion') continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new ConfigError(
        `${option}.${key}`,
        `must be a finite number >= 0 (US dollars per million tokens); got ${String(value)}`,
      );
    }
  }
  return Object.freeze({
    inputPerMillion: price.inputPerMillion as number,
    ...(price.cachedInputPerMillion !== undefined && {
      cachedInputPerMillion: price.cachedInputPerMillion as number,
    }),
    outputPerMillion: price.outputPerMillion as number,
  });
}
