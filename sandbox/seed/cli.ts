// Seeds an indexer database from the command line:
//   tsx sandbox/seed/cli.ts --url postgres://… [--migrate] [--seed 1] [--parties 200] [--fills 1000000]
//                           [--orders 200000] [--events 100000] [--batch-every 5000] [--insert]
import postgres from 'postgres';
import { migrate } from '../../schema/migrate.js';
import { seed } from './index.js';

function args(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out.set(a.slice(2), 'true');
    else out.set(a.slice(2), argv[++i]!);
  }
  return out;
}

function int(a: Map<string, string>, name: string): number | undefined {
  const v = a.get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new Error(`--${name} must be a non-negative integer`);
  return Number(v);
}

async function main(): Promise<void> {
  const a = args(process.argv.slice(2));
  const url = a.get('url') ?? process.env.DATABASE_URL;
  if (!url) throw new Error('--url (or DATABASE_URL) is required');
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  try {
    if (a.get('migrate') === 'true') await migrate(sql);
    const result = await seed(sql, {
      seed: int(a, 'seed'),
      parties: int(a, 'parties'),
      fills: int(a, 'fills'),
      orders: int(a, 'orders'),
      events: int(a, 'events'),
      batchEvery: int(a, 'batch-every'),
      copy: a.get('insert') !== 'true',
    } as never);
    await sql`ANALYZE`;
    const { parties, ...rest } = result;
    console.log(JSON.stringify({ ...rest, parties: parties.length }, null, 2));
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
