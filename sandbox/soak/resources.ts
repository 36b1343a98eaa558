// The gateway's resources over the run: RSS and open file descriptors from /proc (Linux), V8 heap
// and the memory Node accounts outside it from its own /metrics; least-squares slopes say whether
// they stay flat. RSS alone cannot say where memory went: heap used is what JS holds, heap total
// what V8 keeps mapped for it (a heap that grew for a spike and is not given back), external what
// Buffers and other native objects owned by JS hold. RSS above heap total + external is memory
// no JS object owns (native libraries, the allocator keeping freed blocks).
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'undici';

export interface Sample {
  t: number;
  rss: number;
  fds: number;
  heap: number | null;
  /** V8 heap committed (`nodejs_heap_size_total_bytes`). */
  heapTotal: number | null;
  /** Memory of native objects owned by JS, Buffers included (`nodejs_external_memory_bytes`). */
  external: number | null;
  /** Committed size of each V8 heap space (`nodejs_heap_space_size_total_bytes`), by space. */
  spaces: Record<string, number> | null;
}

const metric = (text: string, name: string): number | null => {
  const m = new RegExp(`^${name} (\\d+(?:\\.\\d+)?)`, 'm').exec(text);
  return m ? Number(m[1]) : null;
};

export async function sample(pid: number, gatewayUrl: string): Promise<Sample | null> {
  try {
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    const s: Sample = { t: Date.now(), rss: rssKb * 1024, fds, heap: null, heapTotal: null, external: null, spaces: null };
    try {
      const res = await request(`${gatewayUrl}/metrics`, { headersTimeout: 2000, bodyTimeout: 2000 });
      const text = await res.body.text();
      s.heap = metric(text, 'nodejs_heap_size_used_bytes');
      s.heapTotal = metric(text, 'nodejs_heap_size_total_bytes');
      s.external = metric(text, 'nodejs_external_memory_bytes');
      const spaces: Record<string, number> = {};
      for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([a-z_]+)"\} (\d+)/gm)) spaces[m[1]!] = Number(m[2]);
      s.spaces = Object.keys(spaces).length > 0 ? spaces : null;
    } catch {
      // gateway busy: RSS and fds still count
    }
    return s;
  } catch {
    return null;
  }
}

/** Least-squares slope of y over x. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  let sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const d = n * sxx - sx * sx;
  return d === 0 ? 0 : (n * sxy - sx * sy) / d;
}
