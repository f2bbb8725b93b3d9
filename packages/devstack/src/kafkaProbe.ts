import { kafkajsSecurity, silenceKafkajsTimeoutWarning, type KafkaSecurity } from '@ingest/kafka';
// "Is there a Kafka broker answering here?" via a kafkajs admin describeCluster(), silently.
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;

// kafkajs 2.2.4 schedules `setTimeout(fn, throttledUntil - Date.now())` with throttledUntil = -1
// (src/network/requestQueue/index.js), which Node >= 23 reports once per process as
// "TimeoutNegativeWarning: -17... is a negative number". Node clamps it to 1 ms, as it always did, so
// drop only that warning type; every other warning still goes through.
silenceKafkajsTimeoutWarning();

export type ProbeResult = { ok: true; clusterId: string; brokers: string[] } | { ok: false; error: string };

/** One describeCluster() attempt within timeoutMs; never throws, never logs. */
export async function probeKafka(brokers: string[], timeoutMs: number, security?: KafkaSecurity): Promise<ProbeResult> {
  const kafka = new Kafka({
    clientId: 'devstack-probe',
    brokers,
    ...kafkajsSecurity(security),
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 3000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const attempt = (async () => {
      await admin.connect();
      return admin.describeCluster();
    })();
    attempt.catch(() => {}); // a late rejection after the timeout must not go unhandled
    const cluster = await Promise.race([attempt, timeout]);
    return { ok: true, clusterId: cluster.clusterId, brokers: cluster.brokers.map((b) => `${b.host}:${b.port}`) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => {});
  }
}

/** True if a kafkajs admin can describeCluster() on these brokers within timeoutMs. */
export async function isKafkaReachable(brokers: string[], timeoutMs = 3000, security?: KafkaSecurity): Promise<boolean> {
  return (await probeKafka(brokers, timeoutMs, security)).ok;
}

/**
 * Best effort: makes the broker create __consumer_offsets now (FindCoordinator), so the first consumer
 * group does not log "The group coordinator is not available" while it is being created.
 */
export async function warmUpGroupCoordinator(brokers: string[], timeoutMs = 15_000): Promise<void> {
  const kafka = new Kafka({ clientId: 'devstack-warmup', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  let timer: NodeJS.Timeout | undefined;
  try {
    const attempt = (async () => {
      await admin.connect();
      await admin.describeGroups(['devstack-warmup']);
    })();
    attempt.catch(() => {});
    await Promise.race([attempt, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  } catch {
    /* best effort */
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => {});
  }
}
