// `npm run replay [-- --resume] [--keep-old] [--into scratch]`: rebuild the read model from the
// command log (D26; services/operator/src/tools/replayTool.ts). The same tool as the image's
// `node services/operator/src/cli/replay.ts`, except that the log is found as `npm start` finds it:
// KAFKA_BROKERS, the pipeline's running broker, or the project's own started on its data.
import { join } from 'node:path';
import { acquireKafka, REPO_ROOT } from '@ingest/devstack';
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { REPLAY_FLAGS, replayTool, stopSignal } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

settingsAtStart({
  roles: ['replay'],
  name: 'npm run replay',
  usage: `usage: npm run replay [-- ${REPLAY_FLAGS}] [--help]`,
  checks: KAFKA_SETTINGS_CHECKS,
});
const say = (msg: string) => console.error(`[replay] ${msg}`);
const kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka'), log: say });
try {
  process.exitCode = await replayTool(
    process.argv.slice(2),
    { ...process.env, KAFKA_BROKERS: kafka.brokers.join(',') },
    { command: 'npm run replay --', verifyCommand: 'npm run verify', say, signal: stopSignal() },
  );
} finally {
  await kafka.release();
}
