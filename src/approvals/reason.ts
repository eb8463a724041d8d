// SPEC H2: a rejected call's reason is a person's words, sent to the model (`Not approved:
// <reason>`), journaled, posted to a run's inbox and kept in details. Nothing bounded it: a
// 20 MB reason was stored twice and sent whole, on every later model call of the run. Each
// place a reason enters (approvals(store), an `approve` callback, an app's REJECT event) cuts
// it to a length before anything is stored or sent, and the text the model reads says so.

/** The characters of a reason kept by default: several sentences, never a document. */
export const DEFAULT_MAX_REASON_LENGTH = 1_000;

/** What the model reads after a reason that was cut. */
export function reasonCutNote(max: number): string {
  return `… [reason cut at ${max} characters]`;
}

/**
 * `reason` at most `max` characters long, followed by a note saying where it was cut when it
 * was longer. Cutting again at the same length changes nothing (the first `max` characters
 * are the same), so each place a reason passes may cut it; a shorter limit later cuts it
 * shorter. A cut never splits a character made of two UTF-16 units.
 */
export function cappedReason(reason: string, max = DEFAULT_MAX_REASON_LENGTH): string {
  if (reason.length <= max) return reason;
  const note = reasonCutNote(max);
  if (reason.endsWith(note) && reason.length - note.length <= max) return reason; // cut here before
  let end = max;
  const last = reason.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair is past the cut
  return `${reason.slice(0, end)}${reasonCutNote(max)}`;
}
