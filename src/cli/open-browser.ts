import { spawn } from 'node:child_process';
import { platform } from 'node:os';

/**
 * Opens `url` in the default browser, best effort: where none can be opened, `who` (the
 * command's name) says so and the printed URL is enough.
 */
export function openBrowser(url: string, who: string): void {
  const os = platform();
  const [command, args] =
    os === 'darwin'
      ? ['open', [url]]
      : os === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  const failed = () => process.stderr.write(`${who}: could not open a browser; open ${url}\n`);
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', failed);
    child.unref();
  } catch {
    failed();
  }
}
