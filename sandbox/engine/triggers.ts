/**
 * Take-profit / stop-loss triggers. A trigger belongs to one position epoch; it fires when the
 * market's last trade price crosses its trigger price:
 *   long  TP: price ≥ trigger     long  SL: price ≤ trigger
 *   short TP: price ≤ trigger     short SL: price ≥ trigger
 */
import { formatDec, formatDecOrNull } from './decimal.js';
import type { TriggerKind, TriggerStatus, WireTrigger } from './types.js';

export interface TriggerState {
  triggerId: string;
  party: string;
  market: string;
  kind: TriggerKind;
  status: TriggerStatus;
  triggerPrice: bigint;
  limitPrice: bigint | null;
  /** null = the whole position at firing time. */
  size: bigint | null;
  firedSize: bigint | null;
  firedLimit: bigint | null;
  positionId: string;
  /** `position`: set through /v1/tpsl; `attached`: armed by a filled parent order. */
  origin: 'position' | 'attached';
  parentOrderId: string | null;
  firedOrderId: string | null;
}

export function triggerToWire(t: TriggerState): WireTrigger {
  // Keys in sorted order (canonical JSON fast path for the commitments).
  return {
    firedLimit: formatDecOrNull(t.firedLimit),
    firedSize: formatDecOrNull(t.firedSize),
    kind: t.kind,
    limitPrice: formatDecOrNull(t.limitPrice),
    market: t.market,
    party: t.party,
    positionId: t.positionId,
    size: formatDecOrNull(t.size),
    status: t.status,
    triggerId: t.triggerId,
    triggerPrice: formatDec(t.triggerPrice),
  };
}

/** Whether a trigger of `kind` on a position of sign `positionSign` is hit at `price`. */
export function isHit(kind: TriggerKind, positionSign: bigint, triggerPrice: bigint, price: bigint): boolean {
  const long = positionSign > 0n;
  if (kind === 'tp') return long ? price >= triggerPrice : price <= triggerPrice;
  return long ? price <= triggerPrice : price >= triggerPrice;
}

export class TriggerStore {
  private readonly byId = new Map<string, TriggerState>();
  /** market → armed triggers, in arming order. */
  private readonly armed = new Map<string, Map<string, TriggerState>>();

  get(triggerId: string): TriggerState | undefined {
    return this.byId.get(triggerId);
  }

  arm(t: TriggerState): void {
    t.status = 'armed';
    this.byId.set(t.triggerId, t);
    let m = this.armed.get(t.market);
    if (!m) {
      m = new Map();
      this.armed.set(t.market, m);
    }
    m.set(t.triggerId, t);
  }

  /** Leaves the armed set with a terminal status. */
  settle(t: TriggerState, status: 'cancelled' | 'fired'): void {
    t.status = status;
    this.armed.get(t.market)?.delete(t.triggerId);
  }

  armedFor(party: string, market?: string): TriggerState[] {
    const out: TriggerState[] = [];
    const markets = market === undefined ? [...this.armed.values()] : [this.armed.get(market) ?? new Map<string, TriggerState>()];
    for (const m of markets) for (const t of m.values()) if (t.party === party) out.push(t);
    return out;
  }

  armedForPosition(positionId: string, market: string): TriggerState[] {
    const out: TriggerState[] = [];
    for (const t of this.armed.get(market)?.values() ?? []) if (t.positionId === positionId) out.push(t);
    return out;
  }

  /** Armed triggers in `market` that are hit at `price`, given each party's position sign. */
  due(market: string, price: bigint, positionSign: (party: string) => bigint): TriggerState[] {
    const out: TriggerState[] = [];
    for (const t of this.armed.get(market)?.values() ?? []) {
      const s = positionSign(t.party);
      if (s !== 0n && isHit(t.kind, s, t.triggerPrice, price)) out.push(t);
    }
    return out;
  }
}
