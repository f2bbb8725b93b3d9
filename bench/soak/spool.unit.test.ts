import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Spool } from './spool.ts';

describe('Spool', () => {
  it('gives back every record pushed, in order, after the file is ended', async () => {
    const s = new Spool<{ seq: number; text: string }>(join(mkdtempSync(join(tmpdir(), 'spool-')), 'sent.ndjson'));
    for (let seq = 0; seq < 5000; seq++) s.push({ seq, text: `line\n${seq} "quoted"` });
    expect(s.length).toBe(5000);
    const back = await s.readAll();
    expect(back).toHaveLength(5000);
    expect(back[4999]).toEqual({ seq: 4999, text: 'line\n4999 "quoted"' });
    expect(back.map((r) => r.seq)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});
