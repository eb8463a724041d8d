import { Transcript } from '../transcript.js';
import type { JournalChange } from './journal-mismatch.js';
import { requestHash } from './request-hash.js';

// What a journal's start entry notes of a run's setup, field by field, beside the one hash
// that decides whether a resumed run may go on: when they differ, these say which option
// changed (`maxIterations` (5 → 8), `systemPrompt`, `tools` (add → add, multiply)) instead of
// two hashes. A field is its hash and, for a short value, a preview: numbers, booleans,
// strings cut to PREVIEW_CHARS, a list of named things (tools) by their names. No more than
// that of a long text (a system prompt) goes into the journal or a message.

/** One field of a run's setup, as its start entry keeps it. */
export interface FieldPrint {
  /** requestHash of the field's value. */
  readonly hash: string;
  /** The value shown in a message, cut short; absent when it is not short to show. */
  readonly preview?: string;
}

/** A run's setup by field: `maxIterations`, `contract.systemPrompt`, `tools`… */
export type ConfigFields = Readonly<Record<string, FieldPrint>>;

const PREVIEW_CHARS = 40;

/** Objects whose own fields are what a user set (the chain's prompt contract, its warnings…). */
const SPREAD_INTO = new Set(['contract', 'warnings']);

/**
 * The fields of `setup` (a run's config, maybe with its tools): its own keys, and one level
 * into the objects a user fills in by separate options. Values the codec refuses (functions)
 * cannot be here: the config hash would have refused them first.
 */
export function configFields(setup: unknown): ConfigFields {
  const fields: Record<string, FieldPrint> = {};
  if (!isPlainObject(setup)) return fields;
  for (const [key, value] of Object.entries(setup)) {
    if (value === undefined) continue;
    if (SPREAD_INTO.has(key) && isPlainObject(value)) {
      for (const [inner, innerValue] of Object.entries(value)) {
        if (innerValue !== undefined) fields[`${key}.${inner}`] = print(innerValue);
      }
    } else {
      fields[key] = print(value);
    }
  }
  return fields;
}

/** The fields read back from a start entry; undefined for a journal from before they were kept. */
export function readConfigFields(value: unknown): ConfigFields | undefined {
  if (!isPlainObject(value)) return undefined;
  const fields: Record<string, FieldPrint> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!isPlainObject(field) || typeof field.hash !== 'string') return undefined;
    fields[key] = {
      hash: field.hash,
      ...(typeof field.preview === 'string' && { preview: field.preview }),
    };
  }
  return fields;
}

/** One field that differs: the option's name and, when both values are short, them. */
export type FieldChange = JournalChange;

/** The fields that differ between the journal's setup and the run's, in the journal's order. */
export function configChanges(journaled: ConfigFields, now: ConfigFields): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const key of new Set([...Object.keys(journaled), ...Object.keys(now)])) {
    const before = journaled[key];
    const after = now[key];
    if (before?.hash === after?.hash) continue;
    const shown = (field: FieldPrint | undefined) => (field ? field.preview : '(unset)');
    const [from, to] = [shown(before), shown(after)];
    changes.push({
      option: optionName(key),
      ...(from !== undefined && to !== undefined && { values: `${from} → ${to}` }),
    });
  }
  return changes;
}

/**
 * What differs between two run inputs, by key (`messages`, `userInput`…) and, inside a list of
 * messages, by position, each with the values when they are short. Empty when they are equal.
 */
export function inputChanges(journaled: unknown, now: unknown, name = 'input'): FieldChange[] {
  if (requestHash(journaled) === requestHash(now)) return [];
  let before = journaled instanceof Transcript ? journaled.toArray() : journaled;
  let after = now instanceof Transcript ? now.toArray() : now;
  if (name === 'input') {
    // A string is a run's input written short: compared in the shape of the other side.
    before = typeof before === 'string' ? asShaped(before, after) : before;
    after = typeof after === 'string' ? asShaped(after, before) : after;
  }
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) =>
      inputChanges(before[key], after[key], name === 'input' ? key : `${name}.${key}`),
    );
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length) {
      return [{ option: name, values: `${before.length} → ${after.length} items` }];
    }
    const index = before.findIndex((item, i) => requestHash(item) !== requestHash(after[i]));
    const [x, y] = [before[index], after[index]];
    // A message: its text is what a person recognizes.
    const text = (m: unknown) =>
      isPlainObject(m) && typeof m.content === 'string' ? m.content : m;
    // The same text: what differs is elsewhere in the message (its attachments): name that.
    if (typeof text(x) === 'string' && text(x) === text(y)) {
      return inputChanges(x, y, `${name}[${index}]`);
    }
    return [{ option: `${name}[${index}]`, ...values(text(x), text(y)) }];
  }
  return [{ option: name, ...values(before, after) }];
}

/** `text` as the input `like` is: a chain's `{ messages }`, a tool loop's `{ userInput }`. */
function asShaped(text: string, like: unknown): unknown {
  if (!isPlainObject(like)) return text;
  if ('userInput' in like) return { userInput: text };
  if (Array.isArray(like.messages)) return { messages: [{ role: 'user', content: text }] };
  return text;
}

function values(before: unknown, after: unknown): { values?: string } {
  const [from, to] = [preview(before), preview(after)];
  return from !== undefined && to !== undefined ? { values: `${from} → ${to}` } : {};
}

function print(value: unknown): FieldPrint {
  const shown = preview(value);
  return { hash: requestHash(value), ...(shown !== undefined && { preview: shown }) };
}

/** A short form of `value` for a message, or undefined when it has none. */
function preview(value: unknown): string | undefined {
  if (value === undefined) return '(unset)';
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
    return String(value);
  }
  if (typeof value === 'string') return JSON.stringify(cut(value));
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)';
    const names = value.map((item) => (isPlainObject(item) ? item.name : undefined));
    if (names.every((n): n is string => typeof n === 'string')) return cut(names.join(', '));
  }
  return undefined;
}

function cut(text: string): string {
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

/** The option a field comes from: the contract's fields are options of their own. */
function optionName(key: string): string {
  if (key.startsWith('contract.')) return key.slice('contract.'.length);
  if (key === 'warnings.iterations' || key === 'warnings.tokens') {
    return `warningPrompt/warningThreshold.${key.slice('warnings.'.length)}`;
  }
  return key;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
