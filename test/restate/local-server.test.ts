// startLocalRestate gives the server it starts only the settings it needs: none of this
// process's environment, where the deployment's secret and providers' API keys live.
import { existsSync, readFileSync } from 'node:fs';
import { type LocalRestate, startLocalRestate } from 'statecraft/restate';
import { describe, expect, it } from 'vitest';

const PLANTED = 'STATECRAFT_PLANTED_SECRET';

describe('startLocalRestate', { timeout: 60_000 }, () => {
  it.skipIf(!existsSync('/proc/self/environ'))(
    "hands the server none of this process's environment, only its own settings and `env`",
    async () => {
      process.env[PLANTED] = 'sk-planted-0123456789';
      let server: LocalRestate | undefined;
      try {
        server = await startLocalRestate({ env: { RESTATE_LOG_FILTER: 'warn' } });
        const environ = readFileSync(`/proc/${server.pid()}/environ`, 'utf8')
          .split('\0')
          .filter((variable) => variable !== '');
        expect(environ.join('\n')).not.toContain('sk-planted');
        expect(environ.filter((variable) => !variable.startsWith('RESTATE_'))).toEqual([]);
        expect(environ).toContain('RESTATE_LOG_FILTER=warn');
        expect(environ).toContain(
          `RESTATE_ADMIN__BIND_ADDRESS=127.0.0.1:${new URL(server.adminUrl).port}`,
        );
        expect((await fetch(`${server.adminUrl}/health`)).status).toBe(200);
      } finally {
        delete process.env[PLANTED];
        await server?.stop();
      }
    },
  );
});
