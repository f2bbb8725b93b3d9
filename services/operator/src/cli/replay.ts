// `replay [--resume] [--keep-old] [--into scratch]`: rebuild the read model from the command log (D26).
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';
import { REPLAY_FLAGS, replayTool } from '../tools/replayTool.ts';
import { stopSignal } from '../tools/stopSignal.ts';

const self = 'node services/operator/src/cli/replay.ts';
settingsAtStart({ roles: ['replay'], name: 'replay', usage: `usage: ${self} ${REPLAY_FLAGS} [--help]`, checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await replayTool(process.argv.slice(2), process.env, {
  command: self,
  verifyCommand: 'node services/operator/src/cli/verify.ts',
  say: (msg) => console.error(`[replay] ${msg}`),
  signal: stopSignal(),
});
