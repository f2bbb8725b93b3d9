import { describe, expect, it } from 'vitest';
import {
  COMMAND_UPCASTERS,
  COMMAND_VERSION,
  COMMAND_VERSIONS,
  unchanged,
  upcast,
  type CommandVersions,
  type StoredCommand,
} from './commandVersions.ts';

// The mechanism of docs/replay.md#how-to-add-a-command-version, on a registry of its own: three
// versions of a made-up kind `note.add`, whose field is renamed in 2 and split in 3, and of a kind
// `note.clear` that does not change.
const note = (payload: Record<string, unknown>, kind = 'note.add'): StoredCommand => ({ command_id: 'c1', kind, shop: 's', payload });

const versions: CommandVersions = {
  current: 3,
  upcasters: {
    'note.add': {
      1: (c) => ({ ...c, payload: { body: c.payload['text'] } }),
      2: (c) => ({ ...c, payload: { title: String(c.payload['body']).split('\n')[0], body: c.payload['body'] } }),
    },
    'note.clear': { 1: unchanged, 2: unchanged },
  },
};

describe('upcasting a command to the current version', () => {
  it('applies each version’s upcaster in turn, from the command’s version up', () => {
    expect(upcast(note({ text: 'Hi\nthere' }), 1, versions)).toEqual({ ok: true, command: note({ title: 'Hi', body: 'Hi\nthere' }) });
    expect(upcast(note({ body: 'Hi' }), 2, versions)).toEqual({ ok: true, command: note({ title: 'Hi', body: 'Hi' }) });
  });

  it('leaves a command of the current version as it is', () => {
    const current = note({ title: 't', body: 'b' });
    expect(upcast(current, 3, versions)).toEqual({ ok: true, command: current });
  });

  it('leaves its argument alone: the upcasters return new objects', () => {
    const old = note({ text: 'x' });
    upcast(old, 1, versions);
    expect(old).toEqual(note({ text: 'x' }));
  });

  it('passes a kind that did not change through `unchanged`', () => {
    const clear = note({}, 'note.clear');
    expect(upcast(clear, 1, versions)).toEqual({ ok: true, command: clear });
  });

  it('follows a kind an upcaster renames: the next version is the new kind’s', () => {
    const renaming: CommandVersions = {
      current: 3,
      upcasters: {
        'note.add': { 1: (c) => ({ ...c, kind: 'note.write' }) },
        'note.write': { 2: (c) => ({ ...c, payload: { v3: true } }) },
      },
    };
    expect(upcast(note({}), 1, renaming)).toEqual({ ok: true, command: note({ v3: true }, 'note.write') });
  });

  it('says which upcaster is missing, for any kind name', () => {
    const partial: CommandVersions = { current: 3, upcasters: { 'note.add': { 1: unchanged } } };
    expect(upcast(note({}), 1, partial)).toEqual({ ok: false, error: 'no upcaster of note.add from version 2 to 3' });
    for (const kind of ['note.other', 'constructor', 'toString'])
      expect(upcast(note({}, kind), 2, partial)).toEqual({ ok: false, error: `no upcaster of ${kind} from version 2 to 3` });
  });
});

describe('the production registry', () => {
  it('reads into the version the gateway writes', () => {
    expect(COMMAND_VERSIONS).toEqual({ current: COMMAND_VERSION, upcasters: COMMAND_UPCASTERS });
  });
});
