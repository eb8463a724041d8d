// What kill-approval.test.ts tells approval-child.ts (argv[2], as JSON), and the run's id.

export interface ApprovalChildConfig {
  /** The fileStore's directory. */
  readonly dir: string;
  /** The side-effect log, appended to by every process of the run. */
  readonly log: string;
  readonly proc: string;
  readonly mode: 'invoke' | 'resume';
  readonly approvalTimeoutMs?: number;
  readonly onApprovalTimeout?: 'reject' | 'fail';
  readonly parkForApproval?: boolean;
}

export const APPROVAL_RUN_ID = 'approval-run';
