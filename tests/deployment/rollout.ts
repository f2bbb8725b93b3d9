// `kubectl rollout restart` of a Deployment, as its RollingUpdate strategy does it: with maxSurge 1
// and maxUnavailable 0, a new pod is started and must be ready before an old one is taken out of the
// endpoints and terminated (preStop, SIGTERM, SIGKILL at the grace period), one pod at a time.
import type { Obj } from '../deploy/k8sRender.ts';
import type { RunningPod } from './kubelet.ts';

export interface RestartRecord {
  deployment: string;
  pod: string;
  replacement: string;
  readyMs: number;
  preStopMs: number;
  drainMs: number;
  code: number;
  killed: boolean;
}

export async function rollingRestart(o: {
  deployment: Obj;
  /** The Deployment's running pods; replaced in place as the rollout goes. */
  pods: RunningPod[];
  start: () => Promise<RunningPod>;
  /** Called whenever the set of ready pods may have changed (the Service's endpoints follow it). */
  onChange: () => void;
  say: (m: string) => void;
  readyTimeoutMs?: number;
}): Promise<RestartRecord[]> {
  const name: string = o.deployment['metadata'].name;
  const strategy = o.deployment['spec'].strategy ?? {};
  const surge = strategy.rollingUpdate?.maxSurge ?? 1;
  const unavailable = strategy.rollingUpdate?.maxUnavailable ?? 0;
  if (strategy.type !== 'RollingUpdate' || surge !== 1 || unavailable !== 0)
    throw new Error(`${name}: the rollout here follows maxSurge 1 / maxUnavailable 0, not ${JSON.stringify(strategy)}`);
  const records: RestartRecord[] = [];
  for (const old of [...o.pods]) {
    const t0 = Date.now();
    const fresh = await o.start();
    await fresh.waitReady(o.readyTimeoutMs ?? 180_000);
    const readyMs = Date.now() - t0;
    o.pods.splice(o.pods.indexOf(old), 1, fresh);
    // A pod being deleted leaves the endpoints at once, while its preStop hook runs.
    o.onChange();
    o.say(`${name}: ${fresh.name} ready in ${(readyMs / 1000).toFixed(1)} s; terminating ${old.name}`);
    const t = await old.terminate();
    o.onChange();
    o.say(
      `${name}: ${old.name} gone (preStop ${(t.preStopMs / 1000).toFixed(1)} s, drain ${(t.drainMs / 1000).toFixed(1)} s, exit ${t.code})`,
    );
    records.push({ deployment: name, pod: old.name, replacement: fresh.name, readyMs, ...t });
  }
  return records;
}
