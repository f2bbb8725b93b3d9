import { createLogger, onShutdown, readCommonConfig } from '@ingest/runtime';
import { runGateway } from './service.ts';

const log = createLogger({ name: 'gateway', level: readCommonConfig(process.env).logLevel });
try {
  const gateway = await runGateway(process.env, log);
  onShutdown(log, [['gateway', () => gateway.stop()]]);
} catch (err) {
  log.fatal({ err }, 'gateway failed to start');
  process.exit(1);
}
