// `node scripts/bootstrap.mjs bench/b2-steps.ts [lines] [rounds]`: each step of the gateway's body
// path timed on its own on B2's max body (in one process, no HTTP), to see where a request's CPU
// goes. Medians of `rounds` runs of each step, in ms per body, the steps taken in turn.
import { SchemaRegistry } from '@ingest/contracts';
import { anyInexactToken, inexactNumbers, mayHoldInexactNumbers, RISKY_TOKEN, unstorableText } from '@ingest/gateway/testing/body-path';
import { snapshotBody } from './b2-gateway.ts';
import { median, round, uuidv7 } from './lib/util.ts';

const lines = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 30);
const body = snapshotBody(lines);
const text = body.toString('utf8');
const chunks: Buffer[] = [];
for (let i = 0; i < body.length; i += 64 * 1024) chunks.push(Buffer.from(body.subarray(i, i + 64 * 1024)));
const schemas = new SchemaRegistry();
const top = schemas.validator('http/inventory-snapshot.request.json');
const lineCheck = schemas.validator('http/inventory-snapshot.lines.json');
const sourceReviver = (_k: string, v: unknown, c?: { source?: string }): unknown => (typeof v === 'number' ? (c?.source, v) : v);

/** The byte scan the gateway ran on every UTF-8 body before it looked at the decoded text (for comparison). */
function byteScanBefore(utf8: Buffer): boolean {
  let prev = 0;
  let run = -1;
  for (let i = 0, n = utf8.length; i < n; i++) {
    const c = utf8[i]!;
    const digitOrPoint = (c >= 0x30 && c <= 0x39) || c === 0x2e;
    if (run >= 0) {
      if (digitOrPoint) {
        if (++run >= 16) return true;
        continue;
      }
      if (c === 0x65 || c === 0x45) return true;
      run = -1;
    } else if ((digitOrPoint || c === 0x2d) && (prev === 0x3a || prev === 0x2c || prev === 0x5b)) {
      run = digitOrPoint ? 1 : 0;
      continue;
    }
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) prev = c;
  }
  return false;
}

// Each step: a setup (not timed) that makes its input, and the step itself.
type Step = [setup: () => unknown, run: (input: never) => unknown];
const fromText = () => JSON.parse(text) as { lines: unknown[] };
const none = () => null;
const steps: Record<string, Step> = {
  'read: Buffer.concat of 64 KiB chunks': [none, () => Buffer.concat(chunks)],
  'decode: buf.toString(utf8)': [none, () => body.toString('utf8')],
  'decode: TextDecoder (other UTF charsets)': [none, () => new TextDecoder('utf-8').decode(body)],
  'JSON.parse': [none, () => JSON.parse(text)],
  'JSON.parse with a source reviver': [none, () => JSON.parse(text, sourceReviver)],
  'exact numbers, before: byte scan of the raw body': [none, () => byteScanBefore(body)],
  'exact numbers: risky-token regex test over the text': [none, () => new RegExp(RISKY_TOKEN.source).test(text)],
  'exact numbers: cheap look over the text (mayHoldInexactNumbers)': [none, () => mayHoldInexactNumbers(text)],
  'exact numbers: cheap look, then each risky token (anyInexactToken)': [none, () => anyInexactToken(text)],
  'exact numbers: all of it (inexactNumbers)': [none, () => inexactNumbers(text)],
  "NUL check: buf.includes('\\\\u')": [none, () => body.includes('\\u')],
  'NUL check: unstorableText walk': [fromText, (b: object) => unstorableText(b)],
  'ajv: top schema': [fromText, (b: object) => top(b)],
  'ajv: lines schema': [fromText, (b: { lines: unknown[] }) => lineCheck({ lines: b.lines })],
  'command: JSON.stringify of the envelope': [
    fromText,
    (b: { lines: unknown[] }) => JSON.stringify({ v: 1, command_id: uuidv7(), kind: 'inventory.snapshot', payload: { lines: b.lines } }),
  ],
};

// Round robin over the steps, so that the machine's noise falls on every step alike.
const times = new Map<string, number[]>(Object.keys(steps).map((k) => [k, []]));
for (let i = 0; i < rounds + 5; i++) {
  for (const [name, [setup, run]] of Object.entries(steps)) {
    const input = setup() as never;
    const t0 = performance.now();
    run(input);
    if (i >= 5) times.get(name)!.push(performance.now() - t0);
  }
}
const results = Object.fromEntries([...times].map(([k, t]) => [k, round(median(t), 2)]));
console.log(`body ${lines} lines = ${(body.length / 1024).toFixed(0)} KiB; median ms of ${rounds} runs`);
for (const [name, ms] of Object.entries(results)) console.log(`${String(ms).padStart(8)}  ${name}`);
