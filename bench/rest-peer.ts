// The minimal peer of `npm run bench:rest`: what anyone writes first on the same stack (Fastify 5 +
// postgres.js, the gateway's pool size and SQL, plain `return rows`). No validation, hooks or shapes.
import Fastify from 'fastify';
import postgres from 'postgres';

const sql = postgres(process.env.DATABASE_URL!, { max: Number(process.env.DB_POOL_MAX ?? 16), prepare: true, onnotice: () => {} });
const app = Fastify();
type Q = Record<string, string | undefined>;
const n = (q: Q) => Number(q.limit ?? 100) + 1;
const before = (q: Q, col: string) => (q.before ? sql`AND ${sql(col)} < ${q.before}` : sql``);
const eq = (col: string, v: string | undefined) => (v !== undefined ? sql`AND ${sql(col)} = ${v}` : sql``);
const F = ['fill_id', 'seq', 'leg', 'match_id', 'order_id', 'party', 'market', 'side', 'role', 'size', 'price', 'fee', 'realized_pnl', 'new_balance', 'position_id', 'created_at'];
const O = ['order_id', 'party', 'market', 'side', 'type', 'tif', 'price', 'size', 'filled_size', 'avg_price', 'status', 'client_order_id', 'reduce_only', 'tp_trigger_price', 'tp_limit_price', 'tp_size', 'sl_trigger_price', 'sl_limit_price', 'sl_size', 'created_seq', 'updated_seq', 'created_at', 'updated_at'];
const P = ['position_id', 'party', 'market', 'size', 'entry_price', 'realized_pnl', 'status', 'opened_seq', 'updated_seq', 'closed_seq', 'opened_at', 'updated_at', 'closed_at'];
const T = ['trigger_id', 'party', 'market', 'kind', 'status', 'trigger_price', 'limit_price', 'size', 'fired_size', 'fired_limit', 'position_id', 'parent_order_id', 'fired_order_id', 'created_seq', 'updated_seq', 'created_at', 'updated_at'];
const fills = (q: Q, party?: string) => sql`SELECT ${sql(F)} FROM fills WHERE true ${eq('party', party)} ${eq('market', q.market)} ${before(q, 'seq')} ORDER BY seq DESC, leg LIMIT ${n(q)}`;
app.get('/v1/fills', async (r) => fills(r.query as Q));
app.get('/v1/users/:party/fills', async (r) => fills(r.query as Q, (r.params as Q).party));
app.get('/v1/orders', async (r) => { const q = r.query as Q; return sql`SELECT ${sql(O)} FROM orders WHERE true ${eq('status', q.status)} ${before(q, 'created_seq')} ORDER BY created_seq DESC, order_id LIMIT ${n(q)}`; });
app.get('/v1/users/:party/positions', async (r) => { const q = r.query as Q; return sql`SELECT ${sql(P)} FROM positions WHERE party = ${(r.params as Q).party!} ${before(q, 'updated_seq')} ORDER BY updated_seq DESC, position_id LIMIT ${n(q)}`; });
app.get('/v1/users/:party/triggers', async (r) => { const q = r.query as Q; return sql`SELECT ${sql(T)} FROM triggers WHERE party = ${(r.params as Q).party!} ${before(q, 'created_seq')} ORDER BY created_seq DESC, trigger_id LIMIT ${n(q)}`; });
app.get('/v1/events', async (r) => { const q = r.query as Q; return sql`SELECT seq, kind, ts, market, party, payload FROM events WHERE true ${q.since ? sql`AND seq > ${q.since}` : sql``} ORDER BY seq ASC LIMIT ${n(q)}`; });
app.get('/v1/deposits', async (r) => { const q = r.query as Q; return sql`SELECT seq, deposit_id, party, amount, source, tx_id, created_at FROM deposits WHERE true ${before(q, 'seq')} ORDER BY seq DESC LIMIT ${n(q)}`; });
app.get('/healthz', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => sql.end({ timeout: 2 })).then(() => process.exit(0)));
