import { InputError } from '../errors.js';

// A browser approves a call by the `approvalId` the stream gave it. The id names the run and
// the call (`<runId>:<callId>`, each URI-encoded), so the same call always has the same id and
// a server can tell which run an answer is for without keeping a table. Naming a run is not
// trusting it: whoever reads an answer checks the run is the one its chat holds, and the store
// checks the run asked about that call (see ui-approvals.ts), so an id edited to name another
// run or call is refused rather than deciding it.

/** The id the UI stream gives the approval of `callId` in run `runId`. */
export function approvalIdOf(runId: string, callId: string): string {
  return `${encodeURIComponent(runId)}:${encodeURIComponent(callId)}`;
}

/** The run and call an approval id names; an InputError for an id statecraft did not make. */
export function parseApprovalId(approvalId: string): {
  readonly runId: string;
  readonly callId: string;
} {
  const parts = approvalId.split(':');
  const [run, call] = parts;
  if (parts.length === 2 && run !== undefined && call !== undefined && call !== '') {
    try {
      return { runId: decodeURIComponent(run), callId: decodeURIComponent(call) };
    } catch {
      // a malformed escape: refused below like any other foreign id
    }
  }
  throw new InputError(
    `approval id '${approvalId.slice(0, 200)}' is not one a statecraft UI stream made (<runId>:<callId>)`,
  );
}
