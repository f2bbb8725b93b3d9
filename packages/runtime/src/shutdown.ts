import type { Logger } from 'pino';

/**
 * Graceful shutdown: on SIGINT/SIGTERM run the steps in order (stop intake first, then drain),
 * each with a deadline; a second signal exits at once.
 */
export function onShutdown(log: Logger, steps: Array<[name: string, fn: () => Promise<unknown>]>, timeoutMs = 20000): void {
  let stopping = false;
  const run = async (signal: string): Promise<void> => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    for (const [name, fn] of steps) {
      const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref());
      try {
        await Promise.race([fn(), deadline]);
        log.info({ step: name }, 'stopped');
      } catch (err) {
        log.error({ step: name, err }, 'shutdown step failed');
      }
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void run('SIGINT'));
  process.on('SIGTERM', () => void run('SIGTERM'));
}
