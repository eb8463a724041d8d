import { afterAll, beforeAll, expect } from 'vitest';
import { type Deployment, isAlive, startDeployment } from './deployment.js';

/**
 * A deployment for one test file: started before its tests, stopped after them, and then no
 * process it started (the server, the primary, every worker, replacements included) is alive.
 */
export function useDeployment(options: Parameters<typeof startDeployment>[0]): () => Deployment {
  let deployment: Deployment | undefined;
  beforeAll(async () => {
    deployment = await startDeployment(options);
  }, 90_000);
  afterAll(async () => {
    const pids = deployment ? [...deployment.pids] : [];
    await deployment?.stop();
    expect(pids.filter(isAlive)).toEqual([]);
  }, 60_000);
  return () => {
    if (!deployment) throw new Error('the deployment has not started');
    return deployment;
  };
}
