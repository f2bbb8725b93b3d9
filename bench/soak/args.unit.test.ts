import { describe, expect, it } from 'vitest';
import { parseArgs, seconds } from './args.ts';

describe('parseArgs', () => {
  it('has the defaults of the README', () => {
    const a = parseArgs([]);
    expect(a).toMatchObject({ minutes: 10, cluster: false, fraction: 0.5, shops: 8, heapSnapshotEveryMin: null, sampleEveryS: 60 });
  });

  it('reads every option', () => {
    const a = parseArgs([
      '--minutes',
      '60',
      '--cluster',
      '--fraction',
      '0.4',
      '--heap-snapshot-every',
      '15',
      '--retention',
      '90s',
      '--results-dir',
      '/tmp/x',
    ]);
    expect(a).toMatchObject({
      minutes: 60,
      cluster: true,
      fraction: 0.4,
      heapSnapshotEveryMin: 15,
      retention: '90s',
      resultsDir: '/tmp/x',
    });
  });

  it('refuses what it does not know, fewer than 6 shops and a fraction over 1', () => {
    expect(() => parseArgs(['--hours', '2'])).toThrow(/unknown argument --hours/);
    expect(() => parseArgs(['--shops', '3'])).toThrow(/--shops needs a number >= 6/);
    expect(() => parseArgs(['--fraction', '2'])).toThrow(/at most 1/);
    expect(() => parseArgs(['--retention', '2d'])).toThrow(/duration/);
  });

  it('turns a duration into seconds', () => {
    expect(seconds('2m')).toBe(120);
    expect(seconds('90s')).toBe(90);
  });
});
