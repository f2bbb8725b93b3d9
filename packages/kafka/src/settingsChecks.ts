// The rules that tie the Kafka settings together (client security, topic replication). Each setting
// alone is checked by the catalog (packages/runtime); every entry point passes these to
// settingsAtStart as its `checks`, so a bad combination is reported with the other bad settings,
// before any connection is opened.
import type { SettingsCheck } from '@ingest/runtime';
import { readKafkaSecurity } from './kafkaSecurity.ts';
import { readTopicReplication } from './topicReplication.ts';

export const KAFKA_SETTINGS_CHECKS: readonly SettingsCheck[] = [(env) => readKafkaSecurity(env), (env) => readTopicReplication(env)];
