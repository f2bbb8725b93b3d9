// The scenarios of `npm run test:faults`, in the order they run.
import type { Scenario } from './common.ts';
import { leaderKill } from './cluster.ts';
import { failpointGateway, failpointProjector, failpointRelay } from './failpoints.ts';
import { groupReset } from './groupReset.ts';
import { gatewayKill, projectorKill } from './kills.ts';
import { brokerKill, databaseBlackhole, databaseOutage } from './outages.ts';
import { poison } from './poison.ts';

export type { Scenario } from './common.ts';
export const SCENARIOS: Scenario[] = [
  projectorKill,
  gatewayKill,
  brokerKill,
  databaseOutage,
  databaseBlackhole,
  groupReset,
  poison,
  failpointProjector,
  failpointGateway,
  failpointRelay,
  leaderKill,
];
