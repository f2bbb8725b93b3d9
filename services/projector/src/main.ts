import { createLogger, onShutdown, readCommonConfig } from '@ingest/runtime';
import { runProjector } from './service.ts';

const log = createLogger({ name: 'projector', level: readCommonConfig(process.env).logLevel });
try {
  const projector = await runProjector(process.env, log);
  onShutdown(log, [['projector', () => projector.stop()]]);
} catch (err) {
  log.fatal({ err }, 'projector failed to start');
  process.exit(1);
}
