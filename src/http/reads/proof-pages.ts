// The answers of the proof routes, made once for both and kept (ADR 0063, ADR 0300): the bytes of
// one user batch's proof, built from what readProofInputs read, in the build lane's fair turns.
// The range route, the single route and the warmer (proof-warmer.ts) all write through here, so a
// kept answer is the same bytes whichever made it.
import fastJson from 'fast-json-stringify';
import type { Flow } from '../../fair-share.js';
import type { Clock } from '../../contracts/clock.js';
import { assembleProofs, recordIdentity, writeProof, type ProofInputs, type UserBatchProof } from '../../commitments/proof.js';
import type { RecordedUserBatch } from '../../db/queries/commitments.js';
import { ProofCache } from '../../commitments/proof-cache.js';
import type { BuildLane } from './proof-build-lane.js';
import { deflatePart, type DeflatedPart } from './gzip-parts.js';

/** A kept answer: its bytes, and the same deflated once for a client that takes gzip (ADR 0383). */
export type KeptAnswer = DeflatedPart;

/** The cache of kept answers, counting both forms. */
export function answerCache(options: { maxBytes: number; ttlMs: number; clock: Clock }): ProofCache<KeptAnswer> {
  return new ProofCache<KeptAnswer>({ ...options, sizeOf: (a) => a.plain.length + a.deflated.length });
}

/** Batches of a page built between two turns of the event loop (about 10 ms of work). */
const BUILD_SLICE = 10;

const EMPTY = Buffer.alloc(0);

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ProofPages {
  /** The proof schema's serializer, compiled once (writeProof completes it with the events). */
  private readonly serialize: (proof: UserBatchProof & { events: [] }) => string;

  constructor(
    private readonly cache: ProofCache<KeptAnswer>,
    private readonly lane: BuildLane,
    schema: object,
  ) {
    this.serialize = fastJson(schema as Parameters<typeof fastJson>[0]) as unknown as (proof: UserBatchProof & { events: [] }) => string;
  }

  /** The kept answer of `record`, when one was made from that same record and is fresh. */
  kept(party: string, record: RecordedUserBatch | null): KeptAnswer | null {
    const identity = recordIdentity(record);
    return identity === null ? null : this.cache.get(`${party}\u0000${record!.userSeq}`, identity);
  }

  /** One proof's bytes; a verified one made from a final record is kept (with its deflated form). */
  write(proof: UserBatchProof, record: RecordedUserBatch | null): Buffer {
    return this.made(proof, record).answer.plain;
  }

  private made(proof: UserBatchProof, record: RecordedUserBatch | null): { answer: KeptAnswer; kept: boolean } {
    const bytes = writeProof(proof, this.serialize);
    const identity = recordIdentity(record);
    const kept = proof.status === 'verified' && identity !== null;
    // Deflated only what is kept: an answer made once is served plain or gzip many times.
    const answer = kept ? deflatePart(bytes) : { plain: bytes, deflated: EMPTY };
    if (kept) this.cache.set(`${proof.party}\u0000${proof.userSeq}`, identity, answer);
    return { answer, kept };
  }

  /**
   * Builds the proofs of `inputs` when the lane's fair order comes to `flow`, in slices with the
   * event loop's other work between them (the next page's statements sent, rows received, this
   * page's predecessor written out); each proof's bytes to `onProof`, in order. Returns how many were kept.
   */
  async build(flow: Flow, inputs: ProofInputs, onProof: (answer: KeptAnswer) => void): Promise<number> {
    const events = inputs.batches.reduce((sum, b) => sum + b.events.length, 0);
    return this.lane.run(flow, events, async () => {
      let kept = 0;
      for (let from = 0; from < inputs.batches.length; from += BUILD_SLICE) {
        if (from > 0) await turn();
        const batches = inputs.batches.slice(from, from + BUILD_SLICE);
        for (const [i, proof] of assembleProofs({ party: inputs.party, batches }).entries()) {
          const made = this.made(proof, batches[i]!.row);
          if (made.kept) kept++;
          onProof(made.answer);
        }
      }
      return kept;
    });
  }
}
