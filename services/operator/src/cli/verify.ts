// `verify`: the live read model against the scratch rebuild, table by table (D26); exit 0 only when identical.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';
import { verifyTool } from '../tools/verifyTool.ts';

settingsAtStart({
  roles: ['replay'],
  name: 'verify',
  usage: 'usage: node services/operator/src/cli/verify.ts [--help]',
  checks: KAFKA_SETTINGS_CHECKS,
});
process.exitCode = await verifyTool(process.env, console.log);
