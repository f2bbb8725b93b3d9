import { COMMAND_VERSION } from './commandVersion.ts';
import type { CommandVersions, Upcasters } from './upcast.ts';

/**
 * The upcaster of every kind from every version below the current one
 * (docs/replay.md#how-to-add-a-command-version). None while version 1 is the only one. When version
 * N + 1 is released, each kind of version N gets an entry here: `unchanged` when its schemas stayed
 * the same, else its own upcaster, which lives in the kind's folder beside its decider
 * (`products/upcastProductsUpsert.ts`) with its unit test. A version without them fails npm test
 * (packages/projection/src/commandVersions.unit.test.ts).
 */
export const COMMAND_UPCASTERS: Upcasters = {};

/** What the projector reads commands into: the version the gateway writes. */
export const COMMAND_VERSIONS: CommandVersions = { current: COMMAND_VERSION, upcasters: COMMAND_UPCASTERS };
