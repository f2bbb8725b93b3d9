import type { JsonObject } from '../schemaFiles.ts';
import { sameJson } from './canonicalJson.ts';
import type { Report } from './openapiDiff.ts';
import { child, deref, isObject, labelOf, rootOf, type At } from './refs.ts';
import { compareSchemas } from './schemaDiff.ts';
import type { Change, DocSet, Role } from './types.ts';

/**
 * The topics of the last release against today's (docs/api.md#changing-a-published-contract): a
 * consumer subscribes by topic name and relies on the key for its order (D2, D18), so neither may
 * change and no topic or message may go; headers and payloads are compared as events (or commands,
 * on the command log) that stay on their topic.
 */
export function compareAsyncApi(old: DocSet, current: DocSet, report: Report, doc = 'asyncapi.json'): void {
  if (!old.has(doc)) return;
  const o = rootOf(old, doc);
  const n = rootOf(current, doc);
  const channels = (root: At): string[] => Object.keys((child(root, 'channels').value as JsonObject | undefined) ?? {});
  const newIds = channels(n);
  const address = (side: DocSet, at: At): string => {
    const value = (deref(side, at).value as JsonObject | undefined)?.['address'];
    return typeof value === 'string' ? value : '';
  };
  for (const id of channels(o)) {
    const before = deref(old, child(o, 'channels', id));
    const topic = address(old, before);
    const via = `topic ${topic}`;
    // A channel is the same when its id or its address is (an id is a name inside this document only).
    const sameId = newIds.includes(id) ? id : newIds.find((x) => address(current, child(n, 'channels', x)) === topic);
    if (sameId === undefined) {
      report({ rule: 'topic-removed', role: 'event', what: `topic \`${topic}\` removed`, where: labelOf(before), subject: topic }, via);
      continue;
    }
    const after = deref(current, child(n, 'channels', sameId));
    const now = address(current, after);
    if (now !== topic)
      report(
        { rule: 'topic-renamed', role: 'event', what: `topic \`${topic}\` renamed to \`${now}\``, where: labelOf(child(after, 'address')) },
        via,
      );
    compareMessages(old, current, before, after, (c) => report(c, via), topic);
  }
}

function compareMessages(old: DocSet, current: DocSet, o: At, n: At, report: (c: Change) => void, topic: string): void {
  const names = Object.keys((child(n, 'messages').value as JsonObject | undefined) ?? {});
  for (const name of Object.keys((child(o, 'messages').value as JsonObject | undefined) ?? {})) {
    const before = deref(old, child(o, 'messages', name));
    if (!names.includes(name)) {
      report({
        rule: 'message-removed',
        role: 'event',
        what: `message \`${name}\` removed from topic \`${topic}\``,
        where: labelOf(before),
        subject: name,
      });
      continue;
    }
    const after = deref(current, child(n, 'messages', name));
    const key = (at: At): unknown => child(at, 'bindings', 'kafka', 'key').value;
    if (!sameJson(key(before), key(after)))
      report({
        rule: 'key-changed',
        role: 'event',
        what: `the Kafka key of message \`${name}\` changed from ${JSON.stringify(key(before))} to ${JSON.stringify(key(after))}`,
        where: labelOf(child(after, 'bindings', 'kafka', 'key')),
      });
    const payload = deref(old, child(before, 'payload'));
    const role: Role = payload.file.startsWith('schemas/commands/') ? 'command' : 'event';
    for (const part of ['headers', 'payload'] as const) {
      if (isObject(child(before, part).value)) compareSchemas({ old, new: current, role, report }, child(before, part), child(after, part));
    }
  }
}
