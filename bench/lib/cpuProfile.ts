// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by coarse category.
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  busy_ms: number;
  /** Share of busy (non-idle) time by category, in percent. */
  categories: Record<string, number>;
  top_self: Array<{ fn: string; pct: number }>;
}

function category(fn: string, url: string): string {
  if (fn === '(garbage collector)') return 'gc';
  if (fn === '(program)') return 'v8/program';
  if (!url && fn === 'parse') return 'JSON.parse';
  if (!url && fn === 'stringify') return 'JSON.stringify';
  if (url.includes('commands/idempotency.ts') || url.includes('crypto/hash')) return 'payload hash (canonical JSON + sha256)';
  if (url.includes('gateway/src/edge/body.ts')) return 'unstorableText walk';
  if (url.includes('ajv') || url.includes('validation.ts') || (!url && /^validate/.test(fn))) return 'schema validation (ajv)';
  if (url.includes('body-parser') || url.includes('raw-body') || url.includes('iconv')) return 'body-parser (incl. its JSON.parse)';
  if (url.includes('express') || url.includes('router')) return 'express';
  if (url.includes('/pg') || url.includes('pg-protocol')) return 'pg';
  if (url.includes('kafkajs')) return 'kafkajs';
  if (url.includes('node:internal/modules') || url.includes('amaro')) return 'module loading (start-up)';
  if (url.startsWith('node:')) return 'node core (http, streams, buffers)';
  return url ? 'other js' : 'other native';
}

export function summarizeProfile(p: CpuProfile): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0));
  }
  const byFn = new Map<string, number>();
  const byCat = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)?.callFrame;
    if (!f || f.functionName === '(idle)') continue;
    busy += us;
    const file = f.url
      .replace(/^.*\/node_modules\/\.pnpm\/[^/]+\/node_modules\//, '')
      .replace(/^.*\/work\/main\//, '')
      .replace(/^file:\/\//, '');
    const key = `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : '(native)'}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    const cat = category(f.functionName, f.url);
    byCat.set(cat, (byCat.get(cat) ?? 0) + us);
  }
  const pct = (us: number) => Math.round((1000 * us) / Math.max(1, busy)) / 10;
  return {
    busy_ms: Math.round(busy / 1000),
    categories: Object.fromEntries([...byCat].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, pct(v)])),
    top_self: [...byFn]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([fn, us]) => ({ fn, pct: pct(us) })),
  };
}
