// verifyAccount(party): the trader's balance and positions recomputed from what the chain committed
// (docs/verification.md "Your account"). On top of verifyHistory (every user batch from userSeq 1
// hashed and placed under the chain's manifest), the events of the verified batches are replayed,
// in order, by the published rules (ledger.ts, docs/engine.md "Arithmetic"); every claimed state
// after an event is checked; every deposit the chain recorded must be credited once and every
// approved withdrawal debited once; and the final state must equal the gateway's account view and
// its open positions. The numbers are compared as of the last committed event, read from the
// gateway's record as of that seq (`getAccountAsOf`, ADR 0153), so a party that never stops trading
// is verified up to its last commitment; the current view's newer numbers are named `pending`.
// What the chain has not committed yet is `pending`, never `different`, and does not hold back the
// overall `verified` of what it did commit (ADR 0182): the tail is reported apart.
import type { Account, AccountAsOf, Deposit, Position, UserBatchProof, Withdrawal } from '../generated/wire.js';
import { GatewayError } from '../errors.js';
import type { List } from '../types.js';
import { verifyHistory, type HistoryOptions, type HistorySource, type HistoryVerdict } from './history.js';
import { formatWire, parseWire, type Discrepancy } from './ledger.js';
import { Replay } from './replay.js';

export interface AccountSource extends HistorySource {
  listUserDeposits(party: string, query: { before?: number; limit?: number }): Promise<List<Deposit>>;
  listUserWithdrawals(party: string, query: { before?: number; limit?: number; status?: 'approved' }): Promise<List<Withdrawal>>;
  getAccount(party: string): Promise<Account>;
  /** Collateral and open positions as the gateway's mirror recorded them at seq <= `seq`. */
  getAccountAsOf(party: string, seq: number): Promise<AccountAsOf>;
  listUserPositions(party: string, query: { before?: number; limit?: number; status?: 'open' }): Promise<List<Position>>;
}

export type CheckStatus = 'verified' | 'pending' | 'different';

/** One number: what the committed events give, what the gateway shows, and whether they agree. */
export interface CheckedValue {
  status: CheckStatus;
  /** Recomputed from the committed events (null: no such position there). */
  recomputed: string | null;
  /** Shown by the gateway (null: not shown): as of the last committed event when that read was made (`viewAsOfSeq`), else its current view. */
  shown: string | null;
  /** The gateway's current number when it is newer than the last commitment (pending until the next one). */
  latest?: { shown: string | null; seq: number | null };
}

export interface CheckedPosition {
  market: string;
  positionId: string;
  size: CheckedValue;
  entryPrice: CheckedValue;
  realizedPnl: CheckedValue;
}

/** Something that does not hold, in the order found; `message` is in a trader's words. */
export type AccountProblem =
  | { kind: 'history'; userSeq: number; message: string }
  | ({ kind: 'event'; eventKind: string } & Omit<Discrepancy, 'kind'>)
  | ({ kind: 'deposit'; depositId: string } & RecordProblem)
  | ({ kind: 'withdrawal'; withdrawalId: string } & RecordProblem)
  | {
      kind: 'view';
      /** `account`: the current account view; `positions`: the positions list; `account-as-of`: the record as of the last committed event. */
      source: 'account' | 'positions' | 'account-as-of';
      field: 'collateral' | 'size' | 'entryPrice' | 'realizedPnl' | 'position';
      market?: string;
      expected: string | null;
      actual: string | null;
      message: string;
    };

/**
 * A deposit (withdrawal) the chain recorded (approved) against the credit (debit) the engine
 * committed. When both exist but differ, `field` names the first that differs, `expected` is the
 * chain's record of it and `actual` the committed event's; without a field, one of the two is missing.
 */
export interface RecordProblem {
  seq: number;
  field?: 'amount' | 'seq' | 'txId';
  expected?: string | null;
  actual?: string | null;
  message: string;
}

/** Something the chain has not committed yet: the check of it waits for the next commitment. */
export type PendingItem =
  | { what: 'batches'; userSeq: number; message: string }
  | { what: 'deposits' | 'withdrawals'; count: number; message: string }
  | { what: 'collateral'; seq: number | null; message: string }
  | { what: 'position'; market: string; message: string };

export interface AccountVerdict {
  party: string;
  /**
   * `failed`: something differs (whatever else is pending). `verified`: nothing differs and every
   * number (collateral, each position's size, entry and realized PnL) is verified as of
   * `committedSeq`; what happened after it is not committed yet and is reported apart
   * (`pendingAfterSeq`, `pendingCount`, `pending`), never as a doubt on what is verified.
   * `pending`: nothing differs, but some number could not be verified yet (nothing committed, or a
   * newer number without the gateway's record as of the commitment to compare).
   */
  status: 'verified' | 'pending' | 'failed';
  /** Everything after this seq is not committed yet (= committedSeq) when something is pending; null when nothing is. */
  pendingAfterSeq: number | null;
  /** How many things are not committed yet (the entries of `pending`). */
  pendingCount: number;
  /** The history the replay stands on. */
  history: HistoryVerdict;
  /** The seq of the newest event replayed: the state below is as of it (0: none). */
  committedSeq: number;
  /**
   * The seq the gateway's record was read and compared as of (= committedSeq); null when it was not
   * read (nothing committed, or the gateway could not answer it: `viewAsOfNote` says why), and then
   * a number of the current view newer than committedSeq is `pending` as a whole.
   */
  viewAsOfSeq: number | null;
  viewAsOfNote?: string;
  /** Events replayed and fill legs recomputed; events whose claims differ from the rules. */
  events: number;
  legs: number;
  differingEvents: number;
  collateral: CheckedValue;
  positions: CheckedPosition[];
  deposits: { receipts: number; credited: number; pending: number };
  withdrawals: { approved: number; debited: number; pending: number };
  /** The first thing that differs (null when nothing does). */
  first: AccountProblem | null;
  problems: AccountProblem[];
  /** What is not committed yet (empty when nothing is), each with its message in words. */
  pending: PendingItem[];
}

export interface AccountOptions extends HistoryOptions {
  /** Problems kept in the verdict (default 20). */
  keep?: number;
}

async function all<T>(page: (before: number | undefined) => Promise<List<T>>): Promise<T[]> {
  const out: T[] = [];
  for (let before: number | undefined; ; ) {
    const p = await page(before);
    out.push(...p.items);
    if (p.nextCursor === null || p.items.length === 0) return out;
    before = p.nextCursor;
  }
}

const worse = (a: CheckStatus, b: CheckStatus): CheckStatus => (a === 'different' || b === 'different' ? 'different' : a === 'pending' || b === 'pending' ? 'pending' : 'verified');

export async function verifyAccount(source: AccountSource, party: string, options: AccountOptions = {}): Promise<AccountVerdict> {
  // The history first, then the gateway's reads (ADR 0190). A list of the mirror (positions,
  // deposits, approved withdrawals) says nothing of when it was read: a position row's updatedSeq is
  // the seq of its last change, not the mirror's head at the read. Read while the history is
  // listed, a list may predate the last commitment (the mirror indexes it meanwhile), and the
  // replay, which ends after it, would then differ from an honest mirror (issue 33). Read after the
  // history's proofs, which the mirror served once it held the commitment, every list is at least
  // as new as committedSeq: a row as of a seq at or before it is the state at it. So the reads
  // start once every proof has been fetched, while the last ones are still being checked, with the
  // record as of the seq the replay ends at when every batch verifies; a history that turns out
  // otherwise has that record read again as of its own end.
  const keep = options.keep ?? 20;
  // The verified batches are replayed as they are checked, while later pages are on their way; a
  // proof is held only until it is replayed, nothing of it after (ADR 0386).
  const replay = new Replay(party, keep);
  let early = null as { seq: number; reads: Promise<ViewReads> } | null;
  const history = await verifyHistory(source, party, {
    ...options,
    onBatch: (index, verdict, proof) => {
      replay.checked(index, verdict, proof);
      options.onBatch?.(index, verdict, proof);
    },
    onFetched: (recorded, lastSeq) => {
      // Where the replay ends if every batch verifies (nothing to read early when it is not known).
      if (lastSeq !== null) {
        const reads = viewReads(source, party, lastSeq);
        reads.catch(() => {}); // awaited below; a history that fails first must not leave it unhandled
        early = { seq: lastSeq, reads };
      }
      options.onFetched?.(recorded, lastSeq);
    },
  });
  // The seq of the last event of the verified batches from userSeq 1: where the replay ends.
  const { committedSeq } = replay.finish(history.verdicts);
  const { accountAsOf, asOfNote, account, openPositions, deposits, withdrawals } =
    early === null ? await viewReads(source, party, committedSeq)
    : early.seq === committedSeq ? await early.reads
    : { ...(await early.reads), ...(await asOfRead(source, party, committedSeq)) };
  return checkAccount({ party, history, account, accountAsOf, ...(asOfNote ? { asOfNote } : {}), openPositions, deposits, withdrawals, keep, replay });
}

interface AsOfRead {
  accountAsOf: AccountAsOf | null;
  asOfNote?: string;
}

interface ViewReads extends AsOfRead {
  account: Account;
  openPositions: Position[];
  deposits: Deposit[];
  withdrawals: Withdrawal[];
}

/** The record as of the last committed event: what the replay's state must equal even when the party has traded since (the current view is then ahead). */
async function asOfRead(source: AccountSource, party: string, committedSeq: number): Promise<AsOfRead> {
  if (committedSeq === 0) return { accountAsOf: null };
  try {
    return { accountAsOf: await source.getAccountAsOf(party, committedSeq) };
  } catch (err) {
    // 409: the mirror is behind the commitment; 404: a gateway without the route. Both leave the current view.
    if (!(err instanceof GatewayError) || (err.status !== 409 && err.status !== 404)) throw err;
    return { accountAsOf: null, asOfNote: `the gateway could not show your account as of seq ${committedSeq} (${err.body.code}): its current view was compared instead` };
  }
}

/** The gateway's views the replay is compared with. */
async function viewReads(source: AccountSource, party: string, committedSeq: number): Promise<ViewReads> {
  const [asOf, account, openPositions, deposits, withdrawals] = await Promise.all([
    asOfRead(source, party, committedSeq),
    source.getAccount(party),
    all((before) => source.listUserPositions(party, { status: 'open', limit: 1000, ...(before !== undefined ? { before } : {}) })),
    all((before) => source.listUserDeposits(party, { limit: 1000, ...(before !== undefined ? { before } : {}) })),
    all((before) => source.listUserWithdrawals(party, { status: 'approved', limit: 1000, ...(before !== undefined ? { before } : {}) })),
  ]);
  return { ...asOf, account, openPositions, deposits, withdrawals };
}

export interface AccountInputs {
  party: string;
  history: HistoryVerdict;
  /** The proofs verifyHistory checked, by userSeq: what the replay replays, when `replay` is not given. */
  proofs?: ReadonlyMap<number, UserBatchProof>;
  account: Account;
  /** The gateway's record as of the last committed event (compared when its asOfSeq is that seq). */
  accountAsOf?: AccountAsOf | null;
  /** Why it is missing, when it is. */
  asOfNote?: string;
  openPositions: readonly Position[];
  deposits: readonly Deposit[];
  withdrawals: readonly Withdrawal[];
  keep?: number;
  /**
   * The replay of these batches as far as it has gone (verifyAccount's, advanced as each batch was
   * checked, with the same party, `keep` and proofs); by default the replay starts here.
   */
  replay?: Replay;
}

/** The checks themselves, on data already fetched (verifyAccount fetches it). */
export function checkAccount(input: AccountInputs): AccountVerdict {
  const { party, history, proofs, account } = input;
  const keep = input.keep ?? 20;
  const problems: AccountProblem[] = [];
  const pending: PendingItem[] = [];
  const problem = (p: AccountProblem): void => {
    if (problems.length < keep) problems.push(p);
  };

  // 1. Replay the verified batches from userSeq 1, stopping at the first that is not verified
  // (verifyAccount's replay has done it as far as the batches were checked).
  const replay = (input.replay ?? new Replay(party, keep, (userSeq) => proofs?.get(userSeq))).finish(history.verdicts);
  const { ledger, committedSeq, stoppedAt } = replay;
  if (stoppedAt?.status === 'failed') {
    problem({ kind: 'history', userSeq: stoppedAt.userSeq, message: `batch ${stoppedAt.userSeq} of your history does not match what the chain recorded (${stoppedAt.message})` });
  } else if (stoppedAt?.status === 'pending') {
    pending.push({ what: 'batches', userSeq: stoppedAt.userSeq, message: `batch ${stoppedAt.userSeq} and later are not on chain yet` });
  }
  for (const b of history.chainBreaks) problem({ kind: 'history', userSeq: b.userSeq, message: `your history's chain of batches breaks at batch ${b.userSeq}: ${b.message}` });
  for (const { kind, ...d } of ledger.discrepancies) problem({ ...d, kind: 'event', eventKind: kind });

  // 2. Every deposit the chain recorded was credited once; every approved withdrawal debited once.
  const deposits = reconcile(
    input.deposits.map((r) => ({ id: r.depositId, seq: r.seq, amount: r.amount, txId: r.txId })),
    ledger.deposits,
    committedSeq,
    { noun: 'deposit', recorded: 'recorded', done: 'credited to your balance', move: 'credit' },
  );
  const withdrawals = reconcile(
    input.withdrawals.map((w) => ({ id: w.withdrawalId, seq: w.decidedSeq ?? Infinity, amount: w.amount, txId: null })),
    ledger.withdrawals,
    committedSeq,
    { noun: 'withdrawal', recorded: 'approved', done: 'debited', move: 'debit' },
  );
  for (const { id, ...m } of deposits.problems) problem({ kind: 'deposit', depositId: id, ...m });
  for (const { id, ...m } of withdrawals.problems) problem({ kind: 'withdrawal', withdrawalId: id, ...m });
  if (deposits.pending > 0) pending.push({ what: 'deposits', count: deposits.pending, message: `${deposits.pending} deposit(s) not committed yet` });
  if (withdrawals.pending > 0) pending.push({ what: 'withdrawals', count: withdrawals.pending, message: `${withdrawals.pending} approved withdrawal(s) not committed yet` });

  // 3. The final state against the gateway's record as of the last committed event (every number
  // must be equal), and against its current view and positions list: a number of those from an
  // event newer than the committed history is pending, one as of it must be equal.
  const asOf = input.accountAsOf && input.accountAsOf.asOfSeq === committedSeq && committedSeq > 0 ? input.accountAsOf : null;
  const newer = (seq: number | null | undefined): boolean => (seq ?? 0) > committedSeq || account.asOfSeq < committedSeq;
  const wire = (shown: string | null): string | null => (shown === null ? null : (() => { const v = parseWire(shown); return v === null ? shown : formatWire(v); })());
  const compare = (recomputed: bigint | null, shown: string | null, viewSeq: number | null | undefined): CheckedValue => {
    const r = recomputed === null ? null : formatWire(recomputed);
    const s = wire(shown);
    const status: CheckStatus = newer(viewSeq) ? 'pending' : r === s ? 'verified' : 'different';
    return { status, recomputed: r, shown: s };
  };
  const exact = (recomputed: bigint | null, shown: string | null): CheckedValue => {
    const r = recomputed === null ? null : formatWire(recomputed);
    const s = wire(shown);
    return { status: r === s ? 'verified' : 'different', recomputed: r, shown: s };
  };
  /** With the record as of the commitment, it decides; the current view adds `different` or names what is newer. */
  const combine = (at: CheckedValue | null, current: CheckedValue, currentSeq: number | null | undefined): CheckedValue => {
    if (!at) return current;
    const status: CheckStatus = at.status === 'different' || current.status === 'different' ? 'different' : 'verified';
    return { ...at, status, ...(current.status === 'pending' ? { latest: { shown: current.shown, seq: currentSeq ?? null } } : {}) };
  };
  const atCommit = asOf ? ` (seq ${committedSeq})` : '';

  const current = compare(ledger.balance, account.collateralAsOfSeq === null ? formatWire(0n) : account.collateral, account.collateralAsOfSeq);
  const collateralAt = asOf ? exact(ledger.balance, asOf.collateralAsOfSeq === null ? formatWire(0n) : asOf.collateral) : null;
  if (current.status === 'different') {
    problem({ kind: 'view', source: 'account', field: 'collateral', expected: current.recomputed, actual: current.shown, message: `your collateral should be ${current.recomputed} from the committed events, the gateway shows ${current.shown}` });
  }
  if (collateralAt?.status === 'different') {
    problem({ kind: 'view', source: 'account-as-of', field: 'collateral', expected: collateralAt.recomputed, actual: collateralAt.shown, message: `your collateral at your last commitment${atCommit} should be ${collateralAt.recomputed} from the committed events, the gateway's record of it shows ${collateralAt.shown}` });
  }
  const collateral = combine(collateralAt, current, account.collateralAsOfSeq);
  if (current.status === 'pending') {
    pending.push({ what: 'collateral', seq: account.collateralAsOfSeq, message: `your newest balance change (seq ${String(account.collateralAsOfSeq)}) is not committed yet${asOf && collateral.status === 'verified' ? `; your collateral at your last commitment${atCommit} is verified` : ''}` });
  }

  const positions: CheckedPosition[] = [];
  const markets = new Set([...ledger.positions.keys(), ...account.positions.map((p) => p.market), ...input.openPositions.map((p) => p.market), ...(asOf?.positions ?? []).map((p) => p.market)]);
  const label = (field: 'size' | 'entryPrice' | 'realizedPnl'): string => (field === 'size' ? 'size' : field === 'entryPrice' ? 'entry price' : 'realized PnL');
  for (const market of [...markets].sort()) {
    const mine = ledger.positions.get(market) ?? null;
    const shown = account.positions.find((p) => p.market === market) ?? null;
    const row = input.openPositions.find((p) => p.market === market) ?? null;
    const recorded = asOf?.positions.find((p) => p.market === market) ?? null;
    // A position the view lacks was closed by a fill, which also moved the collateral: its seq says whether that is committed.
    const viewSeq = shown?.asOfSeq ?? account.collateralAsOfSeq;
    const rowSeq = row?.updatedSeq ?? account.collateralAsOfSeq;
    const check = (field: 'size' | 'entryPrice' | 'realizedPnl'): CheckedValue => {
      const a = compare(mine ? mine[field] : null, shown ? shown[field] : null, viewSeq);
      const b = compare(mine ? mine[field] : null, row ? row[field] : null, rowSeq);
      const c = asOf ? exact(mine ? mine[field] : null, recorded ? recorded[field] : null) : null;
      const sources = [[a, 'account', "gateway's account view", shown], [b, 'positions', "gateway's positions list", row], [c, 'account-as-of', `gateway's record at your last commitment${atCommit}`, recorded]] as const;
      for (const [v, source, what, has] of sources) {
        if (v?.status !== 'different') continue;
        problem({
          kind: 'view',
          source,
          field: mine && has ? field : 'position',
          market,
          expected: v.recomputed,
          actual: v.shown,
          message:
            v.recomputed === null
              ? `the ${what} shows a ${market} position the committed events do not have`
              : v.shown === null
                ? `your ${market} position (${v.recomputed} ${label(field)}) is missing from the ${what}`
                : `your ${market} ${label(field)} should be ${v.recomputed} from the committed events, the ${what} shows ${v.shown}`,
        });
      }
      const currentBoth: CheckedValue = { status: worse(a.status, b.status), recomputed: a.recomputed, shown: a.shown ?? b.shown };
      return combine(c, currentBoth, shown?.asOfSeq ?? row?.updatedSeq ?? account.collateralAsOfSeq);
    };
    const checked: CheckedPosition = { market, positionId: mine?.positionId ?? recorded?.positionId ?? shown?.positionId ?? row?.positionId ?? '', size: check('size'), entryPrice: check('entryPrice'), realizedPnl: check('realizedPnl') };
    if (mine && recorded && recorded.positionId !== mine.positionId) {
      checked.size = { ...checked.size, status: 'different' };
      problem({ kind: 'view', source: 'account-as-of', field: 'position', market, expected: mine.positionId, actual: recorded.positionId, message: `your ${market} position at your last commitment${atCommit} is epoch ${mine.positionId} from the committed events, the gateway's record of it shows epoch ${recorded.positionId}` });
    }
    positions.push(checked);
    if (checked.size.status === 'pending' || checked.size.latest) {
      pending.push({ what: 'position', market, message: `your ${market} position changed after the last commitment${asOf && checked.size.status === 'verified' ? `; as of it${atCommit} it is verified` : ''}` });
    }
  }

  const failed = history.status === 'failed' || problems.length > 0;
  const waiting = history.status === 'pending' || pending.length > 0;
  // Verified up to the commitment when every number is, whatever came after it (the uncommitted
  // tail is reported apart); a committed history is needed for that, else it is all pending.
  const numbers = [collateral, ...positions.flatMap((p) => [p.size, p.entryPrice, p.realizedPnl])];
  const verifiedAtCommit = committedSeq > 0 && numbers.every((n) => n.status === 'verified');
  return {
    party,
    status: failed ? 'failed' : !waiting || verifiedAtCommit ? 'verified' : 'pending',
    pendingAfterSeq: waiting ? committedSeq : null,
    pendingCount: pending.length,
    history,
    committedSeq,
    viewAsOfSeq: asOf ? committedSeq : null,
    ...(input.asOfNote ? { viewAsOfNote: input.asOfNote } : {}),
    events: ledger.events,
    legs: ledger.legs,
    differingEvents: ledger.differing,
    collateral,
    positions,
    deposits: { receipts: input.deposits.length, credited: deposits.matched, pending: deposits.pending },
    withdrawals: { approved: input.withdrawals.length, debited: withdrawals.matched, pending: withdrawals.pending },
    first: problems[0] ?? null,
    problems,
    pending,
  };
}

/**
 * Records (deposits the chain recorded, withdrawals it approved) against the ledger's credits or
 * debits: each matched once, by id, with the same amount, seq and transaction id (null on both
 * sides for a faucet deposit or a withdrawal); nothing moved that is not recorded. A record newer
 * than the committed history with no move yet is pending. A difference names the field and both values.
 */
function reconcile(
  records: ReadonlyArray<{ id: string; seq: number; amount: string; txId: string | null }>,
  moved: ReadonlyMap<string, { seq: number; amount: bigint; txId?: string | null }>,
  committedSeq: number,
  words: { noun: string; recorded: string; done: string; move: string },
): { matched: number; pending: number; problems: Array<{ id: string } & RecordProblem> } {
  const out = { matched: 0, pending: 0, problems: [] as Array<{ id: string } & RecordProblem> };
  const ids = new Set<string>();
  const tx = (id: string | null | undefined): string => (id ? `transaction ${id}` : 'no transaction id');
  for (const r of records) {
    ids.add(r.id);
    const m = moved.get(r.id);
    if (!m && r.seq > committedSeq) out.pending++;
    else if (!m) out.problems.push({ id: r.id, seq: r.seq, message: `${words.noun} ${r.id} of ${r.amount}${r.txId ? ` (chain transaction ${r.txId})` : ''} was ${words.recorded} but never ${words.done}` });
    else {
      const amount = parseWire(r.amount);
      const differs: Array<{ field: 'amount' | 'seq' | 'txId'; expected: string | null; actual: string | null; words: string }> = [];
      if (amount === null || m.amount !== amount) differs.push({ field: 'amount', expected: r.amount, actual: formatWire(m.amount), words: `the amount: ${r.amount} ${words.recorded}, ${formatWire(m.amount)} ${words.done}` });
      if (m.seq !== r.seq) differs.push({ field: 'seq', expected: String(r.seq), actual: String(m.seq), words: `the seq: ${words.recorded} at seq ${r.seq}, ${words.done} at seq ${m.seq}` });
      if ((r.txId ?? null) !== (m.txId ?? null)) differs.push({ field: 'txId', expected: r.txId ?? null, actual: m.txId ?? null, words: `the chain transaction: ${words.recorded} with ${tx(r.txId)}, the ${words.move} committed at seq ${m.seq} carries ${tx(m.txId)}` });
      const first = differs[0];
      if (!first) out.matched++;
      else {
        out.problems.push({
          id: r.id,
          seq: m.seq,
          field: first.field,
          expected: first.expected,
          actual: first.actual,
          message: `${words.noun} ${r.id} of ${r.amount} at seq ${r.seq} differs from its ${words.move}: ${differs.map((d) => d.words).join('; ')}`,
        });
      }
    }
  }
  for (const [id, m] of moved) {
    if (!ids.has(id)) out.problems.push({ id, seq: m.seq, message: `a ${words.noun} ${id} of ${formatWire(m.amount)} was ${words.done} at seq ${m.seq}, but no such ${words.noun} is ${words.recorded}` });
  }
  return out;
}
