import { describe, expect, it } from 'vitest';
import { checkSettings, combinedChecks } from '@ingest/runtime';
import { KAFKA_SETTINGS_CHECKS } from './settingsChecks.ts';

// What settingsAtStart checks for an entry point that passes KAFKA_SETTINGS_CHECKS: each setting
// alone, then the Kafka rules, then runtime's own (the public URL).
const checksOf = (roles: Parameters<typeof combinedChecks>[0]) => [...KAFKA_SETTINGS_CHECKS, ...combinedChecks(roles)];

describe('the rules between settings at start', () => {
  it('Kafka security, replication, the public URL', () => {
    const checks = checksOf(['gateway']);
    expect(
      checkSettings({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' }, ['gateway'], checks),
    ).toEqual(['KAFKA_SASL_MECHANISM=plain sends the password in clear: set KAFKA_SSL=true']);
    expect(checkSettings({ KAFKA_REPLICATION_FACTOR: '1', KAFKA_MIN_INSYNC_REPLICAS: '2' }, ['gateway'], checks)[0]).toMatch(
      /KAFKA_MIN_INSYNC_REPLICAS \(2\) is above KAFKA_REPLICATION_FACTOR \(1\)/,
    );
    expect(checkSettings({ PUBLIC_BASE_URL: 'https://x.example/?a=1' }, ['gateway'], checks)[0]).toMatch(/must not carry a query/);
    expect(checkSettings({}, ['gateway', 'projector', 'dev'], checksOf(['gateway', 'projector', 'dev']))).toEqual([]);
  });
});
