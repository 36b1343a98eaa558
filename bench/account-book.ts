// `npm run bench:account` — the account book's share of the live path (ADR 0082): the
// projections alone vs the projections + AccountBook.onEvent, with K complete parties each holding
// a position in every market (the worst case: every fill moves the mark, so every such account
// changes), kept for reads alone or held by stream connections (those get an account.update frame
// per change). Same events, runs alternated, best of 3, on one core; the ratio is what matters
// (the machine may be shared: the load average is printed).
import { sized } from './short.js';
import { loadavg } from 'node:os';
import pino from 'pino';
import { initialProjectionState, project } from '../src/projections/index.js';
import type { EngineEvent } from '../src/contracts/engine-event.js';
import { AccountBook } from '../src/stream/account-book.js';
import { Database } from '../src/db/database.js';
import { parseSubscription } from '../src/stream/subscription.js';
import { syntheticFill } from './stream-shared.js';

const N = Number(process.env.BENCH_EVENTS ?? sized(20_000, 1_000));
const MARKETS = ['BTC-PERP', 'ETH-PERP', 'SOL-PERP'];
const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const db = new Database({ databaseUrl: null, dbPoolMax: 1, dbConnectTimeoutS: 1, dbStatementTimeoutMs: 1000 }, pino({ level: 'silent' }));

/** One fill in five events, as bench/stream.ts's mixed pipeline; seqs after `from`. */
function events(from: number): EngineEvent[] {
  const out: EngineEvent[] = [];
  for (let i = 1; i <= N; i++) {
    const seq = from + i;
    const ts = new Date(T0 + seq).toISOString();
    out.push(
      i % 5 === 0
        ? syntheticFill(seq, T0 + seq)
        : { seq, kind: 'engine.order_cancelled', ts, market: 'BTC-PERP', party: 'bench-a', payload: { orderId: `o-${seq}`, reason: 'user' } },
    );
  }
  return out;
}

/** A book with `k` complete parties, each with a position in every market. */
async function bookWith(k: number, held: boolean): Promise<{ book: AccountBook; head: number }> {
  const book = new AccountBook({ db, logger: { warn() {} }, idleMs: 3_600_000, maxReadParties: 1_000_000 });
  let seq = 0;
  for (let p = 0; p < k; p++) {
    const party = `holder${p}::${String(p).padStart(64, "0")}`;
    if (held) book.subscriptionChanged(null, parseSubscription(new URLSearchParams({ kinds: 'account.update', party }), null));
    await book.account(party);
    for (const market of MARKETS) {
      const fill = syntheticFill(++seq, T0);
      const payload = fill.payload as { legs: Array<Record<string, unknown>> };
      payload.legs[0]!.party = party;
      book.onEvent({ ...fill, market });
    }
  }
  return { book, head: seq };
}

function run(evs: EngineEvent[], book: AccountBook | null): { s: number; frames: number } {
  let state = initialProjectionState();
  let frames = 0;
  const start = process.hrtime.bigint();
  for (const e of evs) {
    const out = project(state, e);
    state = out.state;
    frames += out.frames.length;
    if (book) frames += book.onEvent(e).length;
  }
  return { s: Number(process.hrtime.bigint() - start) / 1e9, frames };
}

console.log(`account book bench: node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' / ')}, ${N} events (1 fill in 5)`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
{
  const { book, head } = await bookWith(10, true); // warm-up (the JIT), not reported
  const evs = events(head);
  run(evs, null);
  run(evs, book);
}
for (const k of sized([0, 10, 100, 1000], [0, 10])) {
  for (const held of k === 0 ? [false] : [false, true]) {
    let plain = Infinity;
    let withBook = Infinity;
    let frames = 0;
    for (let i = 0; i < sized(3, 1); i++) {
      const { book, head } = await bookWith(k, held);
      const evs = events(head);
      plain = Math.min(plain, run(evs, null).s);
      const r = run(evs, book);
      withBook = Math.min(withBook, r.s);
      frames = r.frames;
    }
    const who = k === 0 ? 'no complete party' : `${k} complete parties ${held ? 'held by connections' : 'kept for reads'}`;
    console.log(`${who}: projections ${fmt(N / plain)} events/s; + account book ${fmt(N / withBook)} events/s (×${(withBook / plain).toFixed(2)} time, ${(frames / N).toFixed(1)} frames/event)`);
  }
}
