// B5's and B9's command log: per shop its registry and catalogue first, then the endpoints'
// commands in turn (products, snapshot, available deltas, absolute levels, order lines), the shops
// interleaved as concurrent clients would send them. A generator, so a log of millions of commands
// is written as it is drawn and never held whole.
import type { Command } from '@ingest/domain';
import {
  availableDeltaCommand,
  levelsAbsoluteCommand,
  orderLinesCommand,
  orderRow,
  productsUpsertCommand,
  registerChannelsCommand,
  registerLocationsCommand,
  snapshotCommand,
} from './commands.ts';
import { uuidv7 } from './util.ts';

export interface MixShape {
  shops: number;
  /** Locations per shop (B5: 2). */
  locations: number;
  /** Products per shop in the catalogue (B5: 50); the commands touch a window of them that moves. */
  products: number;
  /** Shop names: `<prefix>-<i>.myshop.example`. */
  prefix: string;
}

export const B5_MIX: MixShape = { shops: 6, locations: 2, products: 50, prefix: 'bench-replay' };

interface Shop {
  name: string;
  i: number;
  locations: string[];
  channel: string;
}

const barcodeOf = (i: number, k: number) => `45${String(i).padStart(3, '0')}${String(k).padStart(8, '0')}`;

/** Command `n` (from 0) of a shop's steady traffic. */
function nth(s: Shop, n: number, shape: MixShape): Command {
  const { name: shop, i, locations, channel } = s;
  // B5's shape (50 products, 2 locations) gives the window 0..29 it always had.
  const k0 = (n * 7) % (shape.products - 20);
  const loc = locations[n % locations.length]!;
  const barcode = (k: number) => barcodeOf(i, k);
  switch (n % 5) {
    case 0:
      return productsUpsertCommand(
        shop,
        Array.from({ length: 5 }, (_, k) => ({
          barcode: barcode(k0 + k),
          product_name: `Replay ${i}/${k0 + k}`,
          current_price: 100 + n + k,
        })),
      );
    case 1:
      return snapshotCommand(
        shop,
        loc,
        Array.from({ length: 20 }, (_, k) => ({ barcode: barcode(k0 + (k % 10)), on_hand_qty: (n + k) % 9, available_qty: (n + k) % 7 })),
      );
    case 2:
      return availableDeltaCommand(
        shop,
        loc,
        Array.from({ length: 5 }, (_, k) => ({ barcode: barcode(k0 + k), available_delta: ((n + k) % 5) - 2 })),
      );
    case 3:
      return levelsAbsoluteCommand(
        shop,
        Array.from({ length: 10 }, (_, k) => ({
          barcode: barcode(k0 + k),
          location_id: locations[k % locations.length]!,
          on_hand_qty: (n * k) % 11,
          available_qty: (n * k) % 11,
        })),
      );
    default:
      return orderLinesCommand(
        shop,
        Array.from({ length: 10 }, (_, k) =>
          orderRow(
            { transaction_id: `T${n % 60}`, line: k + 1 },
            { barcode: barcode(k0 + k), channel_id: channel, location_id: loc },
            `c${n}`,
          ),
        ),
      );
  }
}

/** The log, endless: take as many as wanted. Envelopes are drawn (ids, receive times) as they are taken. */
export function* mixedCommands(shape: MixShape): Generator<Command> {
  const shops: Shop[] = Array.from({ length: shape.shops }, (_, i) => ({
    name: `${shape.prefix}-${i}.myshop.example`,
    i,
    locations: Array.from({ length: shape.locations }, () => uuidv7()),
    channel: uuidv7(),
  }));
  for (const s of shops) {
    yield registerLocationsCommand(
      s.name,
      s.locations.map((id, k) => ({ location_id: id, name: `R${s.i}-${k}` })),
    );
    yield registerChannelsCommand(s.name, [{ channel_id: s.channel, name: 'web' }]);
    yield productsUpsertCommand(
      s.name,
      Array.from({ length: shape.products }, (_, k) => ({
        barcode: barcodeOf(s.i, k),
        product_name: `Replay ${s.i}/${k}`,
        current_price: 100 + k,
      })),
    );
  }
  for (let n = 0; ; n++) for (const s of shops) yield nth(s, n, shape);
}

/** The first `count` commands of `commands`. */
export function take<T>(commands: Iterator<T>, count: number): T[] {
  const out: T[] = [];
  for (let r = commands.next(); out.length < count && !r.done; r = commands.next()) out.push(r.value);
  return out;
}

/** How many lines a command carries (what the projection writes per command). */
export function linesOf(c: Command): number {
  const p = c.payload as { lines?: unknown[]; items?: unknown[]; rows?: unknown[]; locations?: unknown[]; channels?: unknown[] };
  return (p.lines ?? p.items ?? p.rows ?? p.locations ?? p.channels ?? []).length;
}
