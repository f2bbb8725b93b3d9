import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A secret value (password, private key) that cannot leak through a config dump: JSON, pino,
 * util.inspect, template strings all show `[redacted]`. Only `reveal()` gives the value.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return REDACTED;
  }
  toString(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return REDACTED;
  }
}
