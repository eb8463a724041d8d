// `statecraft/restate` (SPEC X3): many runs on many machines, on Restate. The SDK is an
// optional peer dependency loaded only from here; `import 'statecraft'` never pulls it.
// The polyfill comes first: the SDK needs Promise.withResolvers, which Node 20 lacks.
import './restate/with-resolvers.js';

export { RestateCredentialError } from './restate/credential-error.js';
export { approvalPromiseName } from './restate/journal-object.js';
export {
  type LocalRestate,
  type LocalRestateOptions,
  startLocalRestate,
} from './restate/local-server.js';
export { RestateRequestError } from './restate/request-error.js';
export { type RestateRuns, restateRuns, type Submission } from './restate/restate-runs.js';
export { type RestateStoreOptions, restateStore } from './restate/restate-store.js';
export type { RunOutcome, SealedOutcome } from './restate/run-outcome.js';
export type { Agent, Agents, Waiting } from './restate/run-segment.js';
export { type RestateRunStatus, type RunRequest, runWorkflow } from './restate/run-workflow.js';
export {
  registerDeployment,
  serveWorker,
  statecraftServices,
  type Worker,
  type WorkerOptions,
} from './restate/worker.js';
export { serveCluster, type WorkerCluster } from './restate/worker-cluster.js';
