// docs/verification.md's worked example is true: its hashes are recomputed from its events by the
// independent verifier, the gateway's code and the client's, and its 30-line script verifies it
// (and flags it once a digit of the fill's price changes).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonical, leafOf, treeRoot } from '../../support/independent-verifier.js';
import { manifestPath, manifestRoot, userBatchRoot } from '../../../src/commitments/hash.js';
import { foldPath, userRootOf } from '../../../packages/client/src/index.js';

const doc = readFileSync(resolve(process.cwd(), 'docs/verification.md'), 'utf8');
const blockAfter = (marker: string) => {
  const at = doc.indexOf(`<!-- ${marker} -->`);
  expect(at, marker).toBeGreaterThan(0);
  const m = /```\w*\n([\s\S]*?)```/.exec(doc.slice(at))!;
  return m[1]!;
};
const events = JSON.parse(blockAfter('example:events')) as Array<{ seq: number; kind: string; ts: string; market?: string; party?: string; payload: Record<string, unknown> }>;
const table = doc.slice(doc.indexOf('<!-- example:hashes -->')).split('\n\n')[0]!;
const hash = (label: string) => {
  const row = table.split('\n').find((l) => l.startsWith(`| ${label}`));
  expect(row, label).toBeDefined();
  return /`([0-9a-f]{64})`/.exec(row!)![1]!;
};
const sha = (...b: Buffer[]) => createHash('sha256').update(Buffer.concat(b)).digest();

describe('docs/verification.md worked example', () => {
  it('the leaves, the node, the user root and the manifest are what the text says', async () => {
    const leaves = events.map((e) => leafOf(Buffer.from(canonical(e), 'utf8')));
    expect(leaves.map((l) => l.toString('hex'))).toEqual([hash('leaf 1'), hash('leaf 2'), hash('leaf 3')]);
    expect(sha(Buffer.from([1]), leaves[0]!, leaves[1]!).toString('hex')).toBe(hash('node (leaf 1, leaf 2)'));
    const root = hash('user root');
    expect(treeRoot(leaves)).toBe(root);
    expect(userBatchRoot(events)).toBe(root);
    expect(await userRootOf(events)).toBe(root);
    const roots = [root, hash("Bob's user root"), hash("Carol's user root")];
    const mLeaves = roots.map((r) => leafOf(Buffer.from(r, 'hex')));
    expect(mLeaves.map((l) => l.toString('hex'))).toEqual([hash('manifest leaf of Alice'), hash('manifest leaf of Bob'), hash('manifest leaf of Carol')]);
    expect(sha(Buffer.from([1]), mLeaves[0]!, mLeaves[1]!).toString('hex')).toBe(hash('node (Alice, Bob)'));
    const manifest = hash('manifest root');
    expect(treeRoot(mLeaves)).toBe(manifest);
    expect(manifestRoot(roots)).toBe(manifest);
    const path = manifestPath(roots, 0);
    expect(path).toEqual([
      { side: 'right', hash: hash('manifest leaf of Bob') },
      { side: 'right', hash: hash('manifest leaf of Carol') },
    ]);
    expect(doc).toContain(`[{"side":"right","hash":"${path[0]!.hash.slice(0, 8)}…"}, {"side":"right","hash":"${path[1]!.hash.slice(0, 8)}…"}]`);
    expect(await foldPath(root, path)).toBe(manifest);
  });

  it('the 30-line script verifies it, and flags a changed price', () => {
    const script = blockAfter('example:script');
    expect(script.trim().split('\n').length).toBeLessThanOrEqual(30);
    const dir = mkdtempSync(join(tmpdir(), 'verify-script-'));
    const file = join(dir, 'verify-batch.mjs');
    writeFileSync(file, script);
    const roots = [hash('user root'), hash("Bob's user root"), hash("Carol's user root")];
    const proof = {
      party: events[0]!.party,
      userSeq: 1,
      status: 'verified',
      events,
      chain: { userRoot: roots[0], prevRoot: '0'.repeat(64), eventCount: 3, batchNum: 7, txId: 'ab'.repeat(32), committedAt: '2026-11-21T10:00:05.000Z', manifestRoot: hash('manifest root') },
      path: manifestPath(roots, 0),
    };
    const runScript = (p: unknown) => {
      try {
        return { out: execFileSync(process.execPath, [file], { input: JSON.stringify(p) }).toString(), code: 0 };
      } catch (err) {
        const e = err as { stdout: Buffer; status: number };
        return { out: e.stdout.toString(), code: e.status };
      }
    };
    expect(runScript(proof)).toEqual({ out: `verified: 3 events, user root ${roots[0]}, manifest ${hash('manifest root')}, tx ${'ab'.repeat(32)}\n`, code: 0 });
    const tampered = structuredClone(proof);
    (tampered.events[2]!.payload as { price: string }).price = '60001.0000000000';
    const bad = runScript(tampered);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/^MISMATCH: the events hash to [0-9a-f]{64}, the chain has /);
    const pending = runScript({ ...proof, chain: null, path: [] });
    expect(pending.out).toBe('pending: not on chain yet\n');
  });
});
