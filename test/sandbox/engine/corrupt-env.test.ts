// ENGINE_CORRUPT, the reference engine's deliberate accounting fault for tests of verifiers, read
// from the environment of its own process (sandbox/engine/main.ts): `deposit` commits a chain
// deposit without crediting it; an unknown fault refuses to start.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminHeaders, faucet, http } from './helpers.js';

const TSX = join(process.cwd(), 'node_modules/.bin/tsx');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
});

function startEngineProcess(env: Record<string, string>): ChildProcess {
  const child = spawn(TSX, ['sandbox/engine/main.ts'], { env: { ...process.env, ENGINE_PORT: '0', ENGINE_TICK_MS: '0', ENGINE_COMMIT_MS: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return child;
}

async function listening(child: ChildProcess): Promise<string> {
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    const m = /"url":"([^"]+)"/.exec(out);
    if (m) return m[1]!;
  }
  throw new Error(`engine exited: ${out}`);
}

describe('ENGINE_CORRUPT', () => {
  it('deposit: a chain deposit is emitted and answered without being credited', async () => {
    const child = startEngineProcess({ ENGINE_CORRUPT: 'deposit', ENGINE_ADMIN_TOKEN: 't' });
    const url = await listening(child);
    const party = `a::${'a'.repeat(64)}`;
    expect((await faucet(url, 't', party, '100')).body).toMatchObject({ newBalance: '100.0000000000' });
    const r = await http(url, 'POST', '/v1/admin/deposit', { headers: adminHeaders('t', true), body: JSON.stringify({ party, amount: '50', txId: '0x1' }) });
    expect(r.body).toMatchObject({ ok: true, newBalance: '100.0000000000' });
  }, 30_000);

  it('an unknown fault refuses to start', async () => {
    const child = startEngineProcess({ ENGINE_CORRUPT: 'everything' });
    let err = '';
    child.stderr!.on('data', (c) => (err += String(c)));
    const [code] = await once(child, 'exit');
    expect(code).not.toBe(0);
    expect(err).toContain('ENGINE_CORRUPT must be one of fee, deposit, entry, flip-pnl, got "everything"');
  }, 30_000);
});
