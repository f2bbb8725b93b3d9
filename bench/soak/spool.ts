// What the soak keeps of every request until its end checks, written to a file as it comes rather than
// held in the process that times the replies. Held in memory, an hour's 390,000 records grew that
// process's heap to 900 MB of RSS; from minute 32 of a 60-minute run its collections stopped it for
// 150-350 ms a few times a minute, and every reply in flight then took that much longer by its clock:
// the reply p99 of every endpoint, a GET of a small table included, went from 100-200 to 400-800 ms
// while the services' own event loops and PostgreSQL's checkpoints stayed as they were.
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';

export class Spool<T> {
  private readonly path: string;
  private readonly out: WriteStream;
  private n = 0;

  constructor(path: string) {
    this.path = path;
    this.out = createWriteStream(path, { flags: 'w' });
  }

  push(record: T): void {
    this.out.write(`${JSON.stringify(record)}\n`);
    this.n += 1;
  }

  get length(): number {
    return this.n;
  }

  /** Every record pushed, in order; ends the file (call it once, after the load stopped). */
  async readAll(): Promise<T[]> {
    await new Promise<void>((resolve, reject) => {
      this.out.once('error', reject);
      this.out.end(resolve);
    });
    return readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as T);
  }
}
