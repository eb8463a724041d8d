// The same schemas as the quickstart, without statecraft: what zod alone costs the checker.
import { z } from 'zod';

export const input = z.object({ a: z.number(), b: z.number() });
export const output = z.object({ answer: z.number() });
export type Args = z.output<typeof input>;
console.log(input, output);
