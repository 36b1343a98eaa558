// The source of truth: the reference engine's event log, read from its admin SSE stream straight from
// the engine (not through the proxy the gateway uses), from seq 1. Each engine process is one history:
// a restarted engine begins again at seq 1, so the soak keeps one `EngineHistory` per engine process.
import { createParser } from 'eventsource-parser';
import { request } from 'undici';
import { canonical, expectedTrade, hash30, kindId, type EngineEventJson } from './frames.js';

const intern = new Map<string, number>([['', 0]]);
const names: string[] = [''];
/** A small integer for a market or party string (0 = none). */
export function idOf(s: string | undefined): number {
  if (s === undefined) return 0;
  let id = intern.get(s);
  if (id === undefined) {
    id = names.length;
    names.push(s);
    intern.set(s, id);
  }
  return id;
}

export class EngineHistory {
  /** Indexed by seq. */
  readonly kind: number[] = [];
  readonly market: number[] = [];
  readonly party: number[] = [];
  readonly hash: number[] = [];
  /** Hash of the `trade` frame the event must produce; 0 when none. */
  readonly tradeHash: number[] = [];
  /** For each fill: the party of each leg (one `position.update` and one `balance.update` per leg). */
  readonly legParties: Array<number[] | undefined> = [];
  head = 0;
  problems: string[] = [];

  constructor(readonly index: number) {}

  add(e: EngineEventJson): void {
    if (e.seq !== this.head + 1) {
      this.problems.push(`engine log ${this.index}: seq ${e.seq} after ${this.head}`);
      if (e.seq <= this.head) return;
    }
    this.head = e.seq;
    this.kind[e.seq] = kindId(e.kind);
    this.market[e.seq] = idOf(e.market);
    this.party[e.seq] = idOf(e.party);
    this.hash[e.seq] = hash30(canonical(e));
    const t = expectedTrade(e);
    this.tradeHash[e.seq] = t ? hash30(canonical(t)) : 0;
    const legs = (e.payload as { legs?: Array<{ party?: string }> }).legs;
    if (t && Array.isArray(legs)) this.legParties[e.seq] = legs.map((l) => idOf(l.party));
  }
}

/** Follows one engine process's admin stream from seq 1 until `stop()`; reconnects with Last-Event-ID. */
export function followEngine(engineUrl: string, token: string, history: EngineHistory): { stop(): void } {
  let stopped = false;
  let abort = new AbortController();
  void (async () => {
    while (!stopped) {
      abort = new AbortController();
      try {
        const res = await request(`${engineUrl}/v1/admin/events/stream?since=${history.head}`, {
          headers: { authorization: `Bearer ${token}`, 'last-event-id': String(history.head) },
          signal: abort.signal,
          bodyTimeout: 0,
        });
        if (res.statusCode !== 200) {
          await res.body.dump();
          throw new Error(`HTTP ${res.statusCode}`);
        }
        const parser = createParser({
          onEvent(ev) {
            if (ev.data) history.add(JSON.parse(ev.data) as EngineEventJson);
          },
        });
        const text = new TextDecoder();
        for await (const chunk of res.body) parser.feed(text.decode(chunk as Buffer, { stream: true }));
      } catch {
        // engine down or restarting: try again shortly
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop() {
      stopped = true;
      abort.abort();
    },
  };
}
