import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { kafkajsLogLevel } from './client.ts';

// What kafkajs heals by itself is a warning, not an error: an error line is one an operator acts on
// (the soak's "no error logs" verdict, the dashboards' error counts).
describe('kafkajs log lines', () => {
  it('a rebalance, a loading or moved coordinator and a missing leader are warnings', () => {
    for (const error of [
      'The group is rebalancing, so a rejoin is needed',
      "The coordinator is loading and hence can't process requests for this group",
      'This is not the correct coordinator for this group',
      'There is no leader for this topic-partition as we are in the middle of a leadership election',
    ])
      expect(kafkajsLogLevel(logLevel.ERROR, 'Response SyncGroup(key: 14, version: 3)', error), error).toBe('warn');
  });

  it('other errors stay errors; warnings stay warnings', () => {
    expect(kafkajsLogLevel(logLevel.ERROR, 'Connection error', 'connect ECONNREFUSED 127.0.0.1:9092')).toBe('error');
    expect(kafkajsLogLevel(logLevel.ERROR, 'Response SaslAuthenticate', 'SASL authentication failed')).toBe('error');
    expect(kafkajsLogLevel(logLevel.WARN, 'a warning', '')).toBe('warn');
  });

  it('the bounded retries of the idempotent producer, which we ask for, are not logged', () => {
    expect(kafkajsLogLevel(logLevel.WARN, 'Limiting retries for the idempotent producer to Number.MAX_SAFE_INTEGER', '')).toBe('drop');
  });
});
