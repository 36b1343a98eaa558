/**
 * The proof read of `npm run bench:rest` (docs/verification.md): `GET /v1/users/:party/user-batches/
 * :userSeq/proof` of a user batch of about 100 events, against a floor measured in the same run on
 * the same gateway (`GET /v1/users/:party/user-batches?limit=1`: the guard chain, one index read and
 * a one-row answer), so the ratio survives a machine shared with other work. Seeds its own small
 * schema (3 parties, a commit every 150 seqs, so a party's batch holds about 100 events). Writes the
 * block between the proof-bench markers of docs/performance.md. `BENCH_REST_ONLY=proof` runs only this.
 */
import { writeDocsFile } from './docs-block.js';
import { perSecond, SAMPLE_MS, shortCheck, sized } from './short.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate } from '../schema/migrate.js';
import { seed } from '../sandbox/seed/index.js';
import { freePort, stop, stopWithBench, waitHealthy } from './processes.js';

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function proofBench(server: string, seconds: number, connections: number): Promise<void> {
  const load = loadavg().map((l) => l.toFixed(1)).join(' / ');
  const schema = `bench_proof_${Date.now().toString(36)}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const u = new URL(server);
  u.searchParams.set('search_path', schema);
  const url = u.toString();
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  let gateway: ChildProcess | undefined;
  try {
    await migrate(sql);
    await seed(sql, { seed: 20, parties: 3, fills: sized(6_000, 1_500), batchEvery: 150 });
    await sql`ANALYZE`;
    const [batch] = await sql<Array<{ party: string; userSeq: number; eventCount: number }>>`
      SELECT party, user_seq::int AS "userSeq", event_count AS "eventCount" FROM user_batches
      WHERE batch_num IS NOT NULL ORDER BY abs(event_count - 100), batch_num DESC LIMIT 1`;
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    gateway = stopWithBench(spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: url, AUTH_DISABLED: 'true', LOG_LEVEL: 'warn', DB_POOL_MAX: '16', RATE_LIMIT_MAX: '10000000', ENGINE_BASE_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'ignore', 'inherit'],
    }));
    await waitHealthy(base);
    const proofPath = `/v1/users/${batch!.party}/user-batches/${batch!.userSeq}/proof`;
    const proof = (await (await fetch(base + proofPath)).json()) as { status: string; events: unknown[] };
    const reads: Array<[string, string]> = [
      ['floor: `GET /v1/users/:party/user-batches?limit=1`', `/v1/users/${batch!.party}/user-batches?limit=1`],
      [`\`GET /v1/users/:party/user-batches/:userSeq/proof\` (${proof.events.length} events, ${proof.status})`, proofPath],
    ];
    // The first answer of each batch (nothing kept yet): every other committed batch of the seed once,
    // `connections` at a time; their rate is the cost of making a proof.
    const others = await sql<Array<{ party: string; userSeq: number }>>`
      SELECT party, user_seq::int AS "userSeq" FROM user_batches WHERE batch_num IS NOT NULL
      AND NOT (party = ${batch!.party} AND user_seq = ${batch!.userSeq}) ORDER BY batch_num, party LIMIT ${sized(400, connections)}`;
    const coldStart = performance.now();
    let coldEvents = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < others.length) {
          const b = others[next++]!;
          const res = await fetch(`${base}/v1/users/${b.party}/user-batches/${b.userSeq}/proof`);
          shortCheck(`first proof of ${b.party} ${b.userSeq}`, { 'not 200': res.status === 200 ? 0 : 1 });
          const body = (await res.json()) as { events: unknown[] };
          coldEvents += body.events.length;
        }
      }),
    );
    const cold = { n: others.length, rps: Math.round(others.length / ((performance.now() - coldStart) / 1000)), events: Math.round(coldEvents / Math.max(1, others.length)) };
    console.error(`first answers: ${cold.n} batches (${cold.events} events on average) at ${cold.rps} req/s`);
    for (const [, path] of reads) await autocannon({ url: base + path, connections: 4, amount: sized(300, 4), sampleInt: SAMPLE_MS });
    const results: Array<{ name: string; rps: number; p50: number; p99: number; non2xx: number }> = [];
    // Alternate floor and proof twice, best of each, so a change of load hits both alike.
    // A short run: one round of `connections` × 2 requests each.
    for (let round = 0; round < sized(2, 1); round++) {
      for (const [name, path] of reads) {
        const r = await autocannon({ url: base + path, connections, sampleInt: SAMPLE_MS, ...sized({ duration: seconds }, { amount: connections * 2 }) });
        shortCheck(name, { non2xx: r.non2xx, errors: r.errors });
        const prev = results.find((x) => x.name === name);
        const row = { name, rps: Math.round(perSecond(r.requests.average)), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
        if (!prev) results.push(row);
        else if (row.rps > prev.rps) Object.assign(prev, row);
        console.error(`${name}: ${row.rps} req/s p50 ${row.p50} ms p99 ${row.p99} ms non2xx ${row.non2xx}`);
      }
    }
    const [floor, proofRow] = results as [typeof results[0], typeof results[0]];
    const block = [
      '<!-- proof-bench:start -->',
      '## User batch proofs (`npm run bench:rest`, `BENCH_REST_ONLY=proof` for this part alone)',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}, Node ${process.version}, load average ${load} at start (the 2 cores are shared with other work: read the ratio). The gateway runs as its own process on a seeded schema of 3 parties with a commit every 150 seqs; autocannon (${connections} connections, ${seconds} s per read, best of 2 alternated rounds) runs in this process.`,
      '',
      '| Read | req/s | p50 | p99 | non-2xx |',
      '|---|---|---|---|---|',
      ...results.map((x) => `| ${x.name} | ${x.rps} | ${x.p50} ms | ${x.p99} ms | ${x.non2xx} |`),
      `| First answer of a batch (nothing kept yet): ${cold.n} other committed batches once each, ${connections} at a time, ${cold.events} events on average | ${cold.rps} | | | |`,
      '',
      `The proof answers at ${((proofRow.rps / floor.rps) * 100).toFixed(0)} % of the floor's rate (target: ≥ 500 req/s for a 100-event batch). A verified answer is kept (ADR 0063): a request then costs one index read of the chain's record and claim, compared with the ones the kept answer was made from, and the kept bytes. A first answer reads the chain row, the manifest and its user roots, the claim, and the batch's events (five index reads, three of them concurrent), hashes the events and the path, and serialises about ${proof.events.length} envelopes (last row).`,
      '<!-- proof-bench:end -->',
    ].join('\n');
    console.log(block);
    const file = join(ROOT, 'docs/performance.md');
    let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const start = text.indexOf('<!-- proof-bench:start -->');
    const end = text.indexOf('<!-- proof-bench:end -->');
    if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + '<!-- proof-bench:end -->'.length);
    else text = `${text.replace(/\n*$/, '\n\n')}${block}\n`;
    writeDocsFile(file, text);
  } finally {
    if (gateway) await stop(gateway);
    await sql.end({ timeout: 5 });
    await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end({ timeout: 5 });
  }
}
