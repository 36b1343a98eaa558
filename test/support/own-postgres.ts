// A PostgreSQL server of a test's own, on a free loopback port, from the machine's binaries
// (/usr/lib/postgresql/*/bin): for tests that stop, restore or replace the database, which the
// shared server (127.0.0.1:5432) must never undergo. initdb refuses to run as root: as root the
// server runs as the `postgres` user (runuser). Missing binaries: the caller skips, loudly.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { closedPort } from './fleet.js';

const run = promisify(execFile);

/** The newest installed PostgreSQL's bin directory, or null. */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

/** Whether a test can have a PostgreSQL of its own here (the binaries, and runuser when root). */
export const ownPostgresAvailable = postgresBin() !== null && (process.getuid?.() !== 0 || existsSync('/usr/sbin/runuser'));
if (!ownPostgresAvailable && process.env.CI) throw new Error('the PostgreSQL server binaries (initdb, postgres, pg_ctl) are missing in CI');

export interface OwnPostgres {
  port: number;
  url: string;
  /** The data directory the server runs on. */
  data: string;
  /** Runs a PostgreSQL binary (initdb, pg_ctl, pg_basebackup…) as the server's user. */
  tool(name: string, args: string[]): Promise<string>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Replaces the data directory with a copy of `from` (a base backup), the server stopped. */
  replaceData(from: string): Promise<void>;
  /** A fresh directory owned by the server's user. */
  dir(name: string): string;
  close(): Promise<void>;
  /** The same as close(): stops it for good and removes its data. */
  destroy(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const root = mkdtempSync(join(tmpdir(), 'own-pg-'));
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? statSync('/var/lib/postgresql', { throwIfNoEntry: false }) : null;
  const own = (path: string) => {
    if (asRoot && owner) chownSync(path, owner.uid, owner.gid);
  };
  own(root);
  const tool = async (name: string, args: string[]): Promise<string> => {
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, name), ...args]] : [join(bin, name), args];
    const { stdout } = await run(cmd, argv, { cwd: root, timeout: 120_000 });
    return stdout;
  };
  const dir = (name: string) => {
    const path = join(root, name);
    rmSync(path, { recursive: true, force: true });
    return path;
  };
  const port = await closedPort();
  const data = join(root, 'data');
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${root} -c wal_level=replica -c max_wal_senders=4 -c fsync=off`;
  await tool('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  const pg: OwnPostgres = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    data,
    tool,
    dir,
    async start() {
      await tool('pg_ctl', ['-D', data, '-l', join(root, 'log'), '-o', options, '-w', 'start']);
    },
    async stop() {
      await tool('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async replaceData(from) {
      rmSync(data, { recursive: true, force: true });
      await run(asRoot ? 'runuser' : 'cp', asRoot ? ['-u', 'postgres', '--', 'cp', '-a', from, data] : ['-a', from, data]);
    },
    async close() {
      await pg.stop().catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
    destroy: () => pg.close(),
  };
  await pg.start();
  return pg;
}
