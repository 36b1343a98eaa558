/** Opaque ids, unique for the engine's lifetime (a random boot prefix keeps restarts apart). */
import { randomBytes } from 'node:crypto';

export class IdSource {
  private readonly boot = randomBytes(4).toString('hex');
  private n = 0;

  next(prefix: 'o' | 'm' | 'p' | 't' | 'd' | 'w'): string {
    return `${prefix}-${this.boot}-${(++this.n).toString(36)}`;
  }
}
