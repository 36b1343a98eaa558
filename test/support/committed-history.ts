// A party's committed history of two user batches, made by the reference engine in process (a
// chain deposit, a faucet deposit of a maker, three trades), with the chain's record of each batch
// and its proof as the gateway writes it (each event as its canonical text): for the tests of the
// client's verification that need no gateway.
import { EngineCore } from '../../sandbox/engine/core.js';
import { foldPath, userRootOf } from '../../packages/client/src/verify/verify-batch.js';
import { holdersOf, leafText, ZERO_ROOT, type CommittedEvent } from '../../packages/client/src/verify/scheme.js';
import type { UserBatch, UserBatchProof } from '../../packages/client/src/generated/wire.js';

export const HISTORY_PARTY = `a::${'a'.repeat(64)}`;
const MAKER = `m::${'b'.repeat(64)}`;

/** The text of a proof as the gateway writes it. */
export const proofText = (proof: UserBatchProof): string =>
  `{"party":${JSON.stringify(proof.party)},"userSeq":${proof.userSeq},"status":${JSON.stringify(proof.status)},"events":[${proof.events.map((e) => leafText(e as CommittedEvent)).join(',')}],"chain":${JSON.stringify(proof.chain)},"path":${JSON.stringify(proof.path)}}`;

/** The text of a page of proofs as the gateway writes it. */
export const proofPageText = (proofs: UserBatchProof[]): string => `{"items":[${proofs.map(proofText).join(',')}],"nextCursor":null}`;

export async function committedHistory(): Promise<{ party: string; batches: UserBatch[]; proofs: UserBatchProof[] }> {
  const e = new EngineCore();
  e.deposit({ party: HISTORY_PARTY, amount: '1000', txId: '0xaa' }, 'chain');
  e.deposit({ party: MAKER, amount: '100000' }, 'faucet');
  for (let i = 0; i < 3; i++) {
    e.placeOrder(MAKER, { market: 'ETH-PERP', side: 'sell', type: 'limit', size: '1', price: String(2000 + i) });
    e.placeOrder(HISTORY_PARTY, { market: 'ETH-PERP', side: 'buy', type: 'limit', size: '1', price: String(2000 + i), tif: 'ioc' });
  }
  const mine = e.log.eventsSince(0).filter((x) => holdersOf(x as never).includes(HISTORY_PARTY)) as unknown as CommittedEvent[];
  const batches: UserBatch[] = [];
  const proofs: UserBatchProof[] = [];
  let prevRoot = ZERO_ROOT;
  for (const [i, events] of [mine.slice(0, 4), mine.slice(4)].entries()) {
    const userRoot = await userRootOf(events);
    const manifestRoot = await foldPath(userRoot, []);
    batches.push({ party: HISTORY_PARTY, userSeq: i + 1, root: userRoot, prevRoot, eventCount: events.length } as unknown as UserBatch);
    const chain = { userRoot, prevRoot, eventCount: events.length, batchNum: i + 1, txId: null, committedAt: null, manifestRoot };
    proofs.push(JSON.parse(proofText({ party: HISTORY_PARTY, userSeq: i + 1, status: 'verified', events, chain, path: [] } as unknown as UserBatchProof)) as UserBatchProof);
    prevRoot = userRoot;
  }
  return { party: HISTORY_PARTY, batches, proofs };
}
