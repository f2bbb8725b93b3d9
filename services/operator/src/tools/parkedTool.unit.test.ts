import { describe, expect, it } from 'vitest';
import { cliActor, parkedTool, parseParkedArgs } from './parkedTool.ts';

// The parked tool's command line (docs/operations.md#parked-commands): a skip needs a reason, the
// same rule as the operator API's schema; --hold only keeps what a skip would resume.
const ID = '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01';

describe('parseParkedArgs', () => {
  it('reads list, retry with or without a reason, and skip with a reason and --hold', () => {
    expect(parseParkedArgs(['list'])).toEqual({ ok: true, request: { verb: 'list', id: '', reason: null, hold: false } });
    expect(parseParkedArgs(['retry', ID])).toEqual({ ok: true, request: { verb: 'retry', id: ID, reason: null, hold: false } });
    expect(parseParkedArgs(['retry', ID, '--reason', 'bug fixed in 1.4.2'])).toMatchObject({
      ok: true,
      request: { reason: 'bug fixed in 1.4.2' },
    });
    expect(parseParkedArgs(['skip', ID, '--reason=bad date', '--hold'])).toEqual({
      ok: true,
      request: { verb: 'skip', id: ID, reason: 'bad date', hold: true },
    });
    expect(parseParkedArgs(['skip', '--reason', 'bad date', ID])).toMatchObject({ ok: true, request: { id: ID, hold: false } });
  });

  it('refuses a skip without a reason, a blank or over-long reason, --hold on retry and stray arguments', () => {
    expect(parseParkedArgs(['skip', ID])).toEqual({ ok: false, error: '--reason required' });
    expect(parseParkedArgs(['skip', ID, '--reason', '  '])).toEqual({ ok: false, error: '--reason required' });
    expect(parseParkedArgs(['retry', ID, '--reason', 'x'.repeat(1001)])).toEqual({
      ok: false,
      error: '--reason must be at most 1000 characters',
    });
    expect(parseParkedArgs(['skip', ID, '--reason', 'é'.repeat(1000)])).toMatchObject({ ok: true });
    expect(parseParkedArgs(['retry', ID, '--hold'])).toEqual({ ok: false, error: '--hold is for skip' });
    expect(parseParkedArgs(['retry'])).toEqual({ ok: false, error: 'retry needs a command id' });
    expect(parseParkedArgs(['list', ID])).toEqual({ ok: false, error: 'list takes no arguments' });
    expect(parseParkedArgs(['retry', ID, ID])).toEqual({ ok: false, error: `unexpected argument ${ID}` });
    expect(parseParkedArgs(['skip', ID, '--force'])).toMatchObject({ ok: false });
    expect(parseParkedArgs(['purge', ID])).toEqual({ ok: false, error: null });
    expect(parseParkedArgs([])).toEqual({ ok: false, error: null });
  });
});

describe('parkedTool', () => {
  it('answers a bad command line with its problem and the usage, exit 2, before touching the database', async () => {
    const lines: string[] = [];
    const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l), usage: 'usage: parked ...' };
    expect(await parkedTool(['skip', ID], {}, out)).toBe(2);
    expect(lines).toEqual(['--reason required', 'usage: parked ...']);
  });
});

describe('cliActor', () => {
  it('names the OS user who ran the tool', () => {
    expect(cliActor()).toMatch(/^cli:\S+$/);
  });
});
