// A PostgreSQL server of a test's own, on a free loopback port, that the test may stop and start
// again (the machine's shared PostgreSQL on 5432 is never touched). Debian's server binaries; as
// root (CI), initdb and the server run as the `postgres` user, which PostgreSQL requires.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { closedPort, tcpReachable, waitFor } from './fleet.js';
import { reachable } from './global-setup.js';

const BIN = ['/usr/local/bin', '/usr/lib/postgresql/15/bin'].find((d) => existsSync(join(d, 'postgres')) && existsSync(join(d, 'initdb'))) ?? null;
export const ownPostgresAvailable = BIN !== null && (process.getuid?.() !== 0 || existsSync('/usr/sbin/runuser'));
if (!ownPostgresAvailable && process.env.CI) throw new Error('the PostgreSQL server binaries (initdb, postgres, pg_ctl) are missing in CI');
if (!ownPostgresAvailable) console.warn('\n*** SKIPPED: the PostgreSQL fault tests need the PostgreSQL server binaries (initdb, postgres) ***\n');

export interface OwnPostgres {
  url: string;
  port: number;
  /** `pg_ctl stop -m fast`: sessions are ended, as an operator stopping the server. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
}

function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['/usr/sbin/runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  if (!BIN) throw new Error('PostgreSQL server binaries are missing');
  const dir = mkdtempSync(join(tmpdir(), 'gateway-pg-'));
  if (process.getuid?.() === 0) {
    const pg = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(pg.stdout.trim()), Number(gid.stdout.trim()));
  }
  const data = join(dir, 'data');
  const user = process.getuid?.() === 0 ? 'postgres' : userInfo().username;
  const [initCmd, initArgs] = asPostgres(join(BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed (as ${user}): ${init.stderr}`);
  const port = await closedPort();
  let proc: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();

  async function start(): Promise<void> {
    const [cmd, args] = asPostgres(join(BIN!, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=50']);
    proc = spawn(cmd, args, { stdio: 'ignore' });
    const p = proc;
    exited = new Promise<void>((r) => p.once('exit', () => r()));
    await waitFor(() => tcpReachable(`postgres://127.0.0.1:${port}`), 20_000, 'own PostgreSQL');
    // Listening is not accepting ("the database system is starting up"): until a query answers.
    await waitFor(() => reachable(`postgres://postgres@127.0.0.1:${port}/postgres`), 20_000, 'own PostgreSQL accepting queries');
  }
  async function stop(): Promise<void> {
    if (!proc || proc.exitCode !== null) return;
    const [cmd, args] = asPostgres(join(BIN!, 'pg_ctl'), ['stop', '-D', data, '-m', 'fast', '-w']);
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    if (r.status !== 0) proc.kill('SIGKILL');
    await exited;
    proc = null;
  }
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
