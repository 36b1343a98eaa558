// Positions keyed by `positionId`, never by market (docs/stream.md): a flip through zero closes one epoch
// and opens another under a fresh id in the same market, and keying by market would merge the two
// and report the wrong realised PnL. Fed by the REST snapshot, `position.update` frames and, after
// a reconnect, the fill legs of backfilled `engine.order_filled` events. Older data never
// overwrites newer (compared by seq).
import type { EngineEvent, Frame, Position, PositionUpdate } from './types.js';

export interface PositionState {
  positionId: string;
  party: string;
  market: string;
  size: string;
  entryPrice: string;
  realizedPnl: string;
  asOfSeq: number;
}

const ZERO = /^-?0+(\.0+)?$/;

export class PositionsStore {
  private readonly byId = new Map<string, PositionState>();

  /** Only positions of this party are kept. */
  constructor(readonly party: string) {}

  /** REST snapshot (`listUserPositions`), e.g. at start-up. */
  loadSnapshot(positions: readonly Position[]): void {
    for (const p of positions) {
      this.put({ positionId: p.positionId, party: p.party, market: p.market, size: p.size, entryPrice: p.entryPrice, realizedPnl: p.realizedPnl, asOfSeq: p.updatedSeq });
    }
  }

  applyFrame(frame: Frame): boolean {
    if (frame.kind !== 'position.update' || frame.userParty !== this.party) return false;
    const p = frame.payload as unknown as PositionUpdate;
    return this.put({
      positionId: p.positionId,
      party: this.party,
      market: frame.market ?? this.byId.get(p.positionId)?.market ?? '',
      size: p.size,
      entryPrice: p.entryPrice,
      realizedPnl: p.realizedPnl,
      asOfSeq: p.asOfSeq ?? frame.seq,
    });
  }

  /** Fill legs of a raw `engine.order_filled` event (docs/engine.md "Event stream"), in leg order. */
  applyEvent(event: EngineEvent): number {
    if (event.kind !== 'engine.order_filled') return 0;
    const legs = (event.payload.legs ?? []) as Array<Record<string, unknown>>;
    let applied = 0;
    for (const leg of legs) {
      if (leg.party !== this.party) continue;
      const ok = this.put(
        {
          positionId: String(leg.positionId),
          party: this.party,
          market: event.market ?? '',
          size: String(leg.positionSize),
          entryPrice: String(leg.entryPrice),
          realizedPnl: String(leg.realizedPnl),
          asOfSeq: event.seq,
        },
        true,
      );
      if (ok) applied++;
    }
    return applied;
  }

  get(positionId: string): PositionState | undefined {
    return this.byId.get(positionId);
  }
  /** Epochs with a non-zero size. */
  open(): PositionState[] {
    return [...this.byId.values()].filter((p) => !ZERO.test(p.size));
  }
  all(): PositionState[] {
    return [...this.byId.values()];
  }

  /** Two legs of one event (a flip) share a seq, so equal seqs apply in arrival order. */
  private put(next: PositionState, sameSeqWins = true): boolean {
    const known = this.byId.get(next.positionId);
    if (known && (next.asOfSeq < known.asOfSeq || (!sameSeqWins && next.asOfSeq === known.asOfSeq))) return false;
    this.byId.set(next.positionId, next);
    return true;
  }
}
