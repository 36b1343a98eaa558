// The REST account view as the account e2e tests read it: polled until it reflects the engine's head.
import { expect } from 'vitest';
import type { SigningClient } from '../sandbox/engine/helpers.js';

/** `GET /v1/users/:party/account` once its `asOfSeq` reaches `head()` (10 s at most). */
export async function syncedAccount<A extends { asOfSeq: number }>(c: SigningClient, head: () => number): Promise<A> {
  const target = head();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await c.signed<A>('GET', `/v1/users/${c.id}/account`);
    expect(r.status).toBe(200);
    if (r.body.asOfSeq >= target) return r.body;
    if (Date.now() > deadline) throw new Error(`account stuck at ${r.body.asOfSeq} < ${target}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
