import type { Logger } from 'pino';

/**
 * Graceful shutdown: on SIGINT/SIGTERM run the steps in order (stop intake first, then drain),
 * each with a deadline; a second signal exits at once.
 */
export function onShutdown(log: Logger, steps: Array<[name: string, fn: () => Promise<unknown>]>, timeoutMs = 20000): void {
  let stoppingSince = 0;
  const run = async (signal: string): Promise<void> => {
    if (stoppingSince) {
      // Ctrl-C reaches us twice (from the terminal and forwarded by the bootstrap): only a signal
      // sent later, by someone who means it, cuts the graceful shutdown short.
      if (Date.now() - stoppingSince < 2000) return;
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stoppingSince = Date.now();
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
