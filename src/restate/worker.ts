import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import type { JournalStore } from '../durable/stores/journal-store.js';
import {
  type Describes,
  describeOptions,
  type OptionContext,
  type OptionSpec,
} from '../options/describe.js';
import { flag, unchecked } from '../options/kinds.js';
import { credentialOf, SECRET } from './credential.js';
import { RestateHttp } from './ingress.js';
import { journalObject } from './journal-object.js';
import { address, headers, milliseconds, parseOptions, port } from './option-checks.js';
import { restateStore } from './restate-store.js';
import { listingService } from './run-listing.js';
import type { Agents } from './run-segment.js';
import { runWorkflow } from './run-workflow.js';

export interface WorkerOptions {
  /** The chains and tool loops this worker runs, by the name clients `submit` with. */
  readonly agents: Agents;
  /** Restate's ingress, where the runs' journals are kept (restateStore), e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /**
   * The deployment's shared secret (at least 32 characters): the handlers then serve only
   * requests signed with it, and what Restate keeps of a run is sealed with it. Clients
   * (restateStore, restateRuns) are given the same one. Required unless `url` is on this
   * machine: without it, anyone who reaches the ingress can read, decide, submit and delete
   * runs. While it is replaced, a list: the first
   * signs and seals, each one is accepted and opens.
   */
  readonly secret?: string | readonly string[];
  /**
   * Restate's admin API as the workers reach it, e.g. http://127.0.0.1:9070: clients' `list()`
   * asks the workers, which read every run's listing there. Without it, `list()` is refused.
   */
  readonly adminUrl?: string;
  /** Sent with every request the worker makes to Restate (e.g. `authorization` for Restate Cloud). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The port the worker serves Restate on (all processes of a cluster share it). Default 9080. */
  readonly port?: number;
  /** The interface to listen on. Default 127.0.0.1; a server on another machine needs more. */
  readonly host?: string;
  /** Keep the journals elsewhere than in Restate (shared by every worker). Default restateStore({ url }). */
  readonly store?: JournalStore;
  /**
   * Restate's public keys (`publickeyv1_…`): the worker then serves only requests the server
   * signed. Without them anyone who reaches the port can invoke it; keep it on a private network.
   */
  readonly identityKeys?: readonly string[];
}

/** The secret, required when Restate is on another machine. */
const WORKER_SECRET: OptionSpec<string | readonly string[]> = {
  ...SECRET,
  also: (_, at) => {
    const { url } = at.options;
    if (at.options.secret === undefined && isElsewhere(url)) {
      at.problem(
        `is required when Restate is on another machine (${url}): without it, anyone who reaches its ingress reads, decides, submits and deletes runs. Give the workers and every client (restateStore / restateRuns) the same secret, e.g. \`openssl rand -base64 32\``,
      );
    }
  },
};

/**
 * serveWorker's options described once (see src/options/describe.ts): their checks, in the
 * order problems are reported, and their defaults.
 */
export const WORKER_SPECS = {
  agents: {
    required: true,
    defaultText: 'required',
    check: (agents: unknown, at: OptionContext): Agents | undefined => {
      if (typeof agents !== 'object' || agents === null || Object.keys(agents).length === 0) {
        at.problem('must be an object of chains / tool loops by name');
        return undefined;
      }
      const before = at.problems.size;
      for (const [name, agent] of Object.entries(agents)) {
        if (typeof (agent as { invoke?: unknown })?.invoke !== 'function') {
          at.problem('must be a chain or tool loop (with invoke)', `agents.${name}`);
        }
      }
      return at.problems.size === before ? (agents as Agents) : undefined;
    },
  },
  url: address('http://127.0.0.1:8080', { required: true, defaultText: 'required' }),
  secret: WORKER_SECRET,
  adminUrl: address('http://127.0.0.1:9070', { defaultText: 'none (list() is refused)' }),
  headers: headers(),
  port: port({ default: 9080, defaultText: '9080' }),
  host: unchecked<string, string>({ default: '127.0.0.1' }),
  store: unchecked<JournalStore>({ defaultText: 'restateStore({ url })' }),
  identityKeys: unchecked<readonly string[]>({ defaultText: 'none' }),
} as const;

export const WORKER_OPTIONS = describeOptions('serveWorker', WORKER_SPECS);

/** statecraftServices' options, described the same way. */
export const SERVICES_OPTIONS = describeOptions('statecraftServices', {
  agents: unchecked<Agents>({ required: true, defaultText: 'required' }),
  store: unchecked<JournalStore>({ required: true, defaultText: 'required' }),
  secret: SECRET,
  adminUrl: WORKER_SPECS.adminUrl,
  headers: headers(),
});

/** registerDeployment's options, described the same way. */
export const REGISTER_OPTIONS = describeOptions('registerDeployment', {
  adminUrl: address('http://127.0.0.1:9070', { required: true, defaultText: 'required' }),
  workerUrl: address('http://127.0.0.1:9080', { required: true, defaultText: 'required' }),
  force: flag({ default: false }, 'must be true or false'),
  timeoutMs: milliseconds({ default: 30_000 }),
  headers: headers(),
});

// tsc fails here, naming the option, when an interface and its description drift apart.
const _described: [
  Describes<WorkerOptions, typeof WORKER_OPTIONS>,
  Describes<Parameters<typeof statecraftServices>[0], typeof SERVICES_OPTIONS>,
  Describes<Parameters<typeof registerDeployment>[0], typeof REGISTER_OPTIONS>,
] = [true, true, true];

/** A worker serving Restate in this process. */
export interface Worker {
  readonly port: number;
  /** Stops accepting invocations and closes the connections Restate holds. */
  close(): Promise<void>;
}

/**
 * The Restate services a worker serves: the run workflow, the journal object and the run
 * listing, checking requests against `secret` (see WorkerOptions). For serving them from an
 * endpoint of your own (`restate.createEndpointHandler`, a Lambda); `serveWorker` uses it.
 */
export function statecraftServices(options: {
  readonly agents: Agents;
  readonly store: JournalStore;
  readonly secret?: string | readonly string[];
  readonly adminUrl?: string;
  readonly headers?: Readonly<Record<string, string>>;
}) {
  parseOptions(SERVICES_OPTIONS, options);
  const credential = credentialOf(options.secret);
  return [
    journalObject(credential),
    runWorkflow({ agents: options.agents, store: options.store, credential }),
    listingService({ credential, adminUrl: options.adminUrl, http: { headers: options.headers } }),
  ];
}

/** Serves the statecraft services for Restate from this process (HTTP/2, as Restate calls it). */
export async function serveWorker(options: WorkerOptions): Promise<Worker> {
  const { port, host } = parseOptions(WORKER_OPTIONS, options);
  const { agents, url, secret, adminUrl, headers } = options;
  const store =
    options.store ??
    restateStore({
      url,
      ...(secret !== undefined && { secret }),
      ...(headers !== undefined && { headers }),
    });
  const handler = restate.createEndpointHandler({
    services: statecraftServices({
      agents,
      store,
      ...(secret !== undefined && { secret }),
      ...(adminUrl !== undefined && { adminUrl }),
      ...(headers !== undefined && { headers }),
    }),
    ...(options.identityKeys && { identityKeys: [...options.identityKeys] }),
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      await closed;
    },
  };
}

/**
 * Tells Restate's admin API where a worker is (`POST /deployments`), so that it discovers the
 * statecraft services and sends them their invocations. Registering the same address again is
 * harmless. New code goes at a new address, registered beside the old one: Restate sends new
 * runs there and keeps the old deployment for the runs begun on it, which must replay on the
 * code that began them. `force: true` replaces the deployment at an address in place, which
 * breaks such runs; keep it for development.
 */
export async function registerDeployment(options: {
  readonly adminUrl: string;
  readonly workerUrl: string;
  readonly force?: boolean;
  readonly timeoutMs?: number;
  /** Sent with the request, e.g. `{ authorization: 'Bearer …' }` for Restate Cloud's admin API. */
  readonly headers?: Readonly<Record<string, string>>;
}): Promise<void> {
  const { force, timeoutMs } = parseOptions(REGISTER_OPTIONS, options);
  const admin = new RestateHttp(options.adminUrl, timeoutMs, { headers: options.headers });
  await admin.post('/deployments', { uri: options.workerUrl, force });
}

/** Whether `url` is an address of another machine (a deployment that never leaves this one may go without a secret). */
function isElsewhere(url: unknown): boolean {
  let address: URL;
  try {
    address = new URL(String(url));
  } catch {
    return false; // not an address: the url check says so
  }
  const host = address.hostname;
  if (address.protocol !== 'http:' && address.protocol !== 'https:') return false;
  return host !== 'localhost' && host !== '[::1]' && !/^127(?:\.\d{1,3}){3}$/.test(host);
}
