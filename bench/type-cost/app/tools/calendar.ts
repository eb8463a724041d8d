import { defineTool } from 'statecraft';
import { z } from 'zod';

const Attendee = z.object({
  email: z.email(),
  name: z.string().optional(),
  optional: z.boolean().default(false),
});

const Recurrence = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('daily'), count: z.number().int() }),
  z.object({ kind: z.literal('weekly'), days: z.array(z.enum(['mo', 'tu', 'we', 'th', 'fr'])) }),
  z.object({ kind: z.literal('none') }),
]);

export const createEvent = defineTool({
  name: 'create_event',
  description: 'Creates a calendar event.',
  input: z.object({
    title: z.string(),
    start: z.iso.datetime(),
    durationMinutes: z.number().int().positive(),
    attendees: z.array(Attendee),
    recurrence: Recurrence,
    location: z.object({ room: z.string(), building: z.string().optional() }).nullable(),
  }),
  execute: ({ title, attendees, recurrence }) => ({
    id: `event-${title}`,
    invited: attendees.map((a) => a.email),
    repeats: recurrence.kind !== 'none',
  }),
});
