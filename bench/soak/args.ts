// `npm run soak -- --minutes N [--cluster] [--fraction 0.5] [--shops 8] [--heap-snapshot-every M] ...`
export interface SoakArgs {
  minutes: number;
  cluster: boolean;
  /** Share of the measured capacity the soak runs at. */
  fraction: number;
  shops: number;
  heapSnapshotEveryMin: number | null;
  sampleEveryS: number;
  capacityS: number;
  retention: string;
  dayLength: string;
  burstEveryS: number;
  resultsDir: string | null;
}

const USAGE =
  'npm run soak -- --minutes N [--cluster] [--fraction 0.5] [--shops 8] [--heap-snapshot-every M] [--sample-every 60] [--capacity-seconds 30] [--retention 2m] [--day-length 2m] [--burst-every 120] [--results-dir DIR]';

/** The numeric options: the field each sets and its least value. */
const NUMERIC: Record<string, [keyof SoakArgs, number]> = {
  '--minutes': ['minutes', 1],
  '--fraction': ['fraction', 0.01],
  '--shops': ['shops', 6],
  '--heap-snapshot-every': ['heapSnapshotEveryMin', 1],
  '--sample-every': ['sampleEveryS', 5],
  '--capacity-seconds': ['capacityS', 5],
  '--burst-every': ['burstEveryS', 31],
};

/** Parses the command line; throws with the usage on anything it does not know. */
export function parseArgs(argv: string[]): SoakArgs {
  const a: SoakArgs = {
    minutes: 10,
    cluster: false,
    fraction: 0.5,
    shops: 8,
    heapSnapshotEveryMin: null,
    sampleEveryS: 60,
    capacityS: 30,
    retention: '2m',
    dayLength: '2m',
    burstEveryS: 120,
    resultsDir: null,
  };
  const num = (flag: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`${flag} needs a number >= ${min}\nusage: ${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const v = argv[i + 1];
    const numeric = NUMERIC[flag];
    if (numeric) {
      a[numeric[0]] = num(flag, v, numeric[1]) as never;
      i++;
      continue;
    }
    switch (flag) {
      case '--cluster':
        a.cluster = true;
        continue;
      case '--retention':
      case '--day-length':
        if (!v || !/^\d+(s|m|h)$/.test(v)) throw new Error(`${flag} needs a duration such as 90s or 2m\nusage: ${USAGE}`);
        a[flag === '--retention' ? 'retention' : 'dayLength'] = v;
        break;
      case '--results-dir':
        if (!v) throw new Error(`--results-dir needs a directory\nusage: ${USAGE}`);
        a.resultsDir = v;
        break;
      default:
        throw new Error(`unknown argument ${flag}\nusage: ${USAGE}`);
    }
    i++;
  }
  if (a.fraction > 1) throw new Error(`--fraction is a share of capacity, at most 1\nusage: ${USAGE}`);
  return a;
}

/** `2m` → 120 (seconds). */
export const seconds = (d: string): number => Number(d.slice(0, -1)) * ({ s: 1, m: 60, h: 3600 }[d.slice(-1)] ?? 1);
