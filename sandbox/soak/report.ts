// The soak's figures as the Markdown block of docs/reliability.md (between the soak markers), with
// the machine it ran on.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export function machine(): string {
  let nproc = String(cpus().length);
  try {
    nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  } catch {
    // not on Linux coreutils: the CPU count Node sees
  }
  return `\`nproc\` ${nproc}, ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, 1-minute load average ${loadavg()[0]!.toFixed(2)} at the end`;
}

type Result = any;

const f3 = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(3));
const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '**not recovered**' : `${(v / 1000).toFixed(2)} s`);

export function renderMarkdown(r: Result, when: string, machineLine: string): string {
  const lines: string[] = [];
  lines.push(`Run ${when} (${r.mode} mode, \`npm run soak${r.mode === 'short' ? ' -- --short' : ''}\`), ${Math.round(r.runS)} s, simulator at ${r.rate} actions/s, gateway node flags ${r.gatewayNodeFlags.length > 0 ? r.gatewayNodeFlags.map((f: string) => `\`${f}\``).join(' ') : 'none'}, on ${machineLine}.`);
  lines.push(`Engine histories: ${r.engineHistories.map((h: { index: number; events: number }) => `#${h.index} ${h.events} events`).join(', ')}. Verdict: **${r.failures.length === 0 ? 'PASS' : `FAIL (${r.failures.length} checks)`}**.`);
  lines.push('');
  lines.push('| Stream client | Connections | Compared frames (received / owed) | Missing | Duplicated | Not the engine\'s | Out of order | Domain-frame problems | Announced (gap / reset / 4011 / 1001) | Closes |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const c of r.clients) {
    const a = c.announced;
    lines.push(`| ${c.client} | ${c.connects} | ${c.compared} / ${c.expected} | ${c.missing} | ${c.duplicated} | ${c.foreign} | ${c.outOfOrder} | ${c.domainProblems} | ${a.gap} / ${a.reset} / ${a.close4011} / ${a.close1001} | ${Object.entries(c.closes).map(([k, v]) => `${k}×${v}`).join(', ') || '—'} |`);
  }
  lines.push('');
  lines.push('| Fault | At (s) | Lasting | Recovery |');
  lines.push('|---|---|---|---|');
  for (const f of r.faults) {
    const rec = Object.entries(f.recovery as Record<string, number | null>).map(([k, v]) => `${k.replace(/Ms$/, '')} ${ms(v)}`).join(', ');
    let extra = '';
    if (f.kind === 'reconnect-storm' && f.detail) {
      const d = f.detail;
      extra = `; ${d.subscribed}/${d.clients} subscribed, refused ${JSON.stringify(d.refused)}, replaying clients caught up ${d.resumersCaughtUp}/${d.resumers}, closed 4008: ${d.resumersClosed4008}`;
    }
    if (f.kind === 'sse-drop' && f.detail) extra = `; ${f.detail.connectionsCut} engine connections cut`;
    if (f.kind === 'db-freeze' && f.detail) extra = `; ${f.detail.connectionsFrozen} database connections frozen for good`;
    if (f.kind === 'engine-trickle' && f.detail) extra = `; an order book read during it answered ${f.detail.bookDuringFault.status} ${f.detail.bookDuringFault.code ?? ''}`;
    if (f.kind === 'sse-endless-line' && f.detail) extra = `; ${f.detail.streamsCut} engine streams cut into the flood, ${f.detail.oversizedDrops} endless lines dropped by the gateway (bff_sse_oversized_total)`;
    lines.push(`| ${f.kind} | ${Math.round(f.startedAtS)} | ${f.forS ? `${f.forS} s` : '—'} | ${rec}${extra} |`);
  }
  lines.push('');
  const rest = r.rest;
  lines.push(`REST readers: ${rest.requests} requests, answers ${Object.entries(rest.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')}; p50 ${rest.p50Ms} ms, p99 ${rest.p99Ms} ms, max ${rest.maxMs} ms (time the gateway was stopped by the soak not counted); ${rest.bad} undocumented answers, ${rest.resetsAcrossPause ?? 0} connection resets of requests sent into a gateway pause (counted apart), ${rest.overDeadline} over the ${rest.hangMs ?? r.hangMs} ms limit (deadline ${r.deadlineMs} ms + 2 s).`);
  lines.push('');
  if (r.book) {
    const b = r.book;
    lines.push(`Order book kept from events (a client drawing every market's book from \`orderbook.delta\`, depth 100): **${b.divergences ?? 'n/a'} repairs** (\`bff_book_divergences_total\`, must be 0); books seeded order by order from the mirror ${b.seeds.orders}, from the engine's levels ${b.seeds.levels}; the client: ${b.client.connects} connections, ${b.client.snapshots} snapshots, ${b.client.deltas} deltas, ${b.client.gaps} gaps, ${b.client.checksumMismatches} checksum mismatches.`);
    lines.push('');
  }
  const res = r.resources;
  lines.push(`Gateway resources (${res.samples} samples every 2 s, ${res.quietSamples} of them quiet; slopes by least squares after the first fifth of the run${res.judged ? '' : '; not judged, run under 5 min'}):`);
  lines.push('');
  lines.push('| Resource | First | Max | Last | Slope, all samples | Slope, quiet samples (judged) |');
  lines.push('|---|---|---|---|---|---|');
  lines.push(`| RSS | ${res.rssMiB.first.toFixed(1)} MiB | ${res.rssMiB.max.toFixed(1)} MiB | ${res.rssMiB.last.toFixed(1)} MiB | ${f3(res.rssMiB.slopeMiBPerMin)} MiB/min | ${f3(res.rssMiB.quietSlopeMiBPerMin)} MiB/min (≤ 4) |`);
  lines.push(`| V8 heap used | ${res.heapMiB.first.toFixed(1)} MiB | ${res.heapMiB.max.toFixed(1)} MiB | ${res.heapMiB.last.toFixed(1)} MiB | ${f3(res.heapMiB.slopeMiBPerMin)} MiB/min | ${f3(res.heapMiB.quietSlopeMiBPerMin)} MiB/min (≤ 1) |`);
  // Printed, not judged: they say whether RSS growth is the JS heap, Buffers or native memory.
  if (res.heapTotalMiB) lines.push(`| V8 heap total (committed) | ${res.heapTotalMiB.first.toFixed(1)} MiB | ${res.heapTotalMiB.max.toFixed(1)} MiB | ${res.heapTotalMiB.last.toFixed(1)} MiB | ${f3(res.heapTotalMiB.slopeMiBPerMin)} MiB/min | ${f3(res.heapTotalMiB.quietSlopeMiBPerMin)} MiB/min (not judged) |`);
  if (res.externalMiB) lines.push(`| External (Buffers, native objects of JS) | ${res.externalMiB.first.toFixed(1)} MiB | ${res.externalMiB.max.toFixed(1)} MiB | ${res.externalMiB.last.toFixed(1)} MiB | ${f3(res.externalMiB.slopeMiBPerMin)} MiB/min | ${f3(res.externalMiB.quietSlopeMiBPerMin)} MiB/min (not judged) |`);
  lines.push(`| Open fds | ${res.fds.first} | ${res.fds.max} | ${res.fds.last} | ${f3(res.fds.slopePerMin)} /min | ${f3(res.fds.quietSlopePerMin)} /min (≤ 1) |`);
  if (r.failures.length > 0) {
    lines.push('');
    lines.push('Failed checks:');
    lines.push('');
    for (const f of r.failures) lines.push(`- ${String(f).replace(/\|/g, '\\|')}`);
  }
  return lines.join('\n');
}

/** Replaces the block between `<!-- soak:start -->` and `<!-- soak:end -->` of `file`. */
export function writeDocsBlock(file: string, block: string): void {
  if (!existsSync(file)) throw new Error(`${file} is missing`);
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf('<!-- soak:start -->');
  const end = text.indexOf('<!-- soak:end -->');
  if (start < 0 || end < start) throw new Error(`${file} has no soak markers`);
  writeFileSync(file, `${text.slice(0, start)}<!-- soak:start -->\n${block}\n${text.slice(end)}`);
}
