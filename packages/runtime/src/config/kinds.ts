// What a setting's value may be: each kind parses the raw environment string and
// says, in one sentence, what it expects. `--help` and the README table print that sentence.

export interface Kind<T> {
  /** What the setting accepts, for --help and the README ("an integer >= 1"). */
  readonly accepts: string;
  /** The value of a raw (non-empty) setting; throws an Error whose message is what was expected. */
  parse(raw: string): T;
}

const expected = (what: string): never => {
  throw new Error(`must be ${what}`);
};

export function integer(min = 0, max = Number.MAX_SAFE_INTEGER): Kind<number> {
  const accepts = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
  return {
    accepts,
    parse: (raw) => {
      const n = Number(raw.trim());
      return /^-?\d+$/.test(raw.trim()) && Number.isSafeInteger(n) && n >= min && n <= max ? n : expected(accepts);
    },
  };
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as `7d`, `12h`, `30s`, `500ms` (a bare number is milliseconds), in milliseconds. */
export function duration(minMs = 0): Kind<number> {
  const accepts = `a duration such as 500ms, 30s, 1m, 12h or 7d${minMs > 0 ? `, at least ${formatMs(minMs)}` : ''}`;
  return {
    accepts,
    parse: (raw) => {
      const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim());
      const ms = m ? Number(m[1]) * (DURATION_UNITS[m[2] ?? 'ms'] ?? 1) : NaN;
      return Number.isSafeInteger(ms) && ms >= minMs ? ms : expected(accepts);
    },
  };
}

/** `1500` → `1500ms`, `6000` → `6s`, `60000` → `1m`: the largest unit that divides it. */
export function formatMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Any text, at least `minLength` characters long (a pepper, a password). */
export function text(accepts = 'text', minLength = 0): Kind<string> {
  return { accepts, parse: (raw) => (raw.length >= minLength ? raw : expected(accepts)) };
}

/** Comma-separated; blanks dropped (rotating secrets, D9; bootstrap brokers). */
export function list(accepts = 'a comma-separated list'): Kind<string[]> {
  return {
    accepts,
    parse: (raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
  };
}

export function flag(): Kind<boolean> {
  return {
    accepts: 'true or false',
    parse: (raw) => {
      const v = raw.trim().toLowerCase();
      if (v === 'true' || v === '1') return true;
      if (v === 'false' || v === '0') return false;
      return expected('true or false');
    },
  };
}

/** One of a few words, case-insensitive; the value is the word as listed. */
export function oneOf<V extends string>(values: readonly V[]): Kind<V> {
  const accepts = `one of ${values.join(', ')}`;
  return {
    accepts,
    parse: (raw) => values.find((v) => v === raw.trim().toLowerCase()) ?? expected(accepts),
  };
}

/** Several of a few words, comma-separated, at least one. */
export function someOf<V extends string>(values: readonly V[]): Kind<V[]> {
  const accepts = `a comma-separated list of ${values.join(', ')}`;
  return {
    accepts,
    parse: (raw) => {
      const words = list().parse(raw.toLowerCase());
      const bad = words.filter((w) => !values.includes(w as V));
      if (words.length === 0 || bad.length > 0) return expected(accepts);
      return values.filter((v) => words.includes(v));
    },
  };
}

/** Whether the runtime knows `zone` as an IANA time zone (what BUSINESS_TIMEZONE accepts). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function timeZone(): Kind<string> {
  const accepts = 'an IANA time zone such as Asia/Tokyo';
  return { accepts, parse: (raw) => (isTimeZone(raw.trim()) ? raw.trim() : expected(accepts)) };
}

/** An absolute URL with one of `protocols` (without the colon). */
export function url(protocols: readonly string[]): Kind<string> {
  const accepts = `an absolute ${protocols.join(' or ')} URL`;
  return {
    accepts,
    parse: (raw) => {
      try {
        const u = new URL(raw.trim());
        if (protocols.includes(u.protocol.replace(/:$/, ''))) return raw.trim();
      } catch {
        // falls through to the refusal
      }
      return expected(accepts);
    },
  };
}
