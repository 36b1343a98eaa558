// The gateway's resources over the run: RSS and open file descriptors from /proc (Linux), V8 heap
// from its own /metrics; least-squares slopes say whether they stay flat.
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'undici';

export interface Sample {
  t: number;
  rss: number;
  fds: number;
  heap: number | null;
}

export async function sample(pid: number, gatewayUrl: string): Promise<Sample | null> {
  try {
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    let heap: number | null = null;
    try {
      const res = await request(`${gatewayUrl}/metrics`, { headersTimeout: 2000, bodyTimeout: 2000 });
      const text = await res.body.text();
      const m = /^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(text);
      heap = m ? Number(m[1]) : null;
    } catch {
      // gateway busy: RSS and fds still count
    }
    return { t: Date.now(), rss: rssKb * 1024, fds, heap };
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
