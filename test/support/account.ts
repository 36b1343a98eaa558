// The REST account view as the account e2e tests read it: polled until it reflects the engine's head.
import { expect } from 'vitest';
import type { SigningClient } from '../sandbox/engine/helpers.js';
import { eventually } from './eventually.js';

/** `GET /v1/users/:party/account` once its `asOfSeq` reaches `head()` (10 s at most). */
export async function syncedAccount<A extends { asOfSeq: number }>(c: SigningClient, head: () => number): Promise<A> {
  const target = head();
  let seen: number | null = null;
  return eventually(
    async () => {
      const r = await c.signed<A>('GET', `/v1/users/${c.id}/account`);
      expect(r.status).toBe(200);
      seen = r.body.asOfSeq;
      return r.body.asOfSeq >= target && r.body;
    },
    { timeoutMs: 10_000, everyMs: 5, what: () => `the account at ${target} (stuck at ${seen})` },
  );
}
