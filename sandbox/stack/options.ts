// Command-line flags and environment of `npm start` (sandbox/stack/main.ts). Flags win over env.
import { resolve } from 'node:path';

export interface StackOptions {
  /** External PostgreSQL URL; null → embedded PGlite. */
  externalDb: string | null;
  reset: boolean;
  dataDir: string;
  enginePort: number;
  gatewayPort: number;
  /** Port of the reference web console (0 = any free port). */
  consolePort: number;
  dbPort: number;
  /** Simulator actions per second (0 = no simulator). */
  rate: number;
  bots: number;
  adminToken: string;
  authDisabled: boolean;
  logLevel: string;
}

export class UsageError extends Error {}

export const USAGE = `usage: npm start -- [options]
  --reset                 wipe the local data directory (.data/) first
  --external-db <url>     use this PostgreSQL instead of the embedded one (env STACK_DATABASE_URL)
  --rate <n>              simulator actions per second, 0 = no simulator (env SIM_RATE, default 20)
  --bots <n>              simulator bots (env SIM_BOTS, default 8)
  --port <n>              gateway port (env PORT, default 4000)
  --engine-port <n>       engine port (env ENGINE_PORT, default 8080)
  --console-port <n>      web console port (env CONSOLE_PORT, default 4100)
  --db-port <n>           embedded PostgreSQL port (env STACK_DB_PORT, default 54329)
  --data-dir <path>       data directory (env STACK_DATA_DIR, default .data)
  --no-auth               run the gateway with AUTH_DISABLED=true
  Port 0 picks a free port.`;

function port(name: string, v: string): number {
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new UsageError(`${name} must be a port number, got "${v}"`);
  return Number(v);
}

function count(name: string, v: string, max: number): number {
  if (!/^\d+$/.test(v) || Number(v) > max) throw new UsageError(`${name} must be an integer from 0 to ${max}, got "${v}"`);
  return Number(v);
}

export function parseOptions(argv: string[], env: Record<string, string | undefined>, root: string): StackOptions {
  const o: StackOptions = {
    externalDb: env.STACK_DATABASE_URL || null,
    reset: false,
    dataDir: resolve(root, env.STACK_DATA_DIR || '.data'),
    enginePort: port('ENGINE_PORT', env.ENGINE_PORT || '8080'),
    gatewayPort: port('PORT', env.PORT || '4000'),
    consolePort: port('CONSOLE_PORT', env.CONSOLE_PORT || '4100'),
    dbPort: port('STACK_DB_PORT', env.STACK_DB_PORT || '54329'),
    rate: count('SIM_RATE', env.SIM_RATE || '20', 100_000),
    bots: count('SIM_BOTS', env.SIM_BOTS || '8', 1000),
    adminToken: env.ENGINE_ADMIN_TOKEN || 'dev-admin-token',
    authDisabled: env.AUTH_DISABLED === 'true',
    logLevel: env.LOG_LEVEL || 'warn',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--reset': o.reset = true; break;
      case '--external-db': o.externalDb = value(); break;
      case '--rate': o.rate = count('--rate', value(), 100_000); break;
      case '--bots': o.bots = count('--bots', value(), 1000); break;
      case '--port': o.gatewayPort = port('--port', value()); break;
      case '--engine-port': o.enginePort = port('--engine-port', value()); break;
      case '--console-port': o.consolePort = port('--console-port', value()); break;
      case '--db-port': o.dbPort = port('--db-port', value()); break;
      case '--data-dir': o.dataDir = resolve(root, value()); break;
      case '--no-auth': o.authDisabled = true; break;
      case '-h': case '--help': throw new UsageError('');
      default: throw new UsageError(`unknown option ${flag}`);
    }
  }
  if (o.externalDb !== null && !/^postgres(ql)?:\/\//.test(o.externalDb)) throw new UsageError('--external-db must be a postgres:// URL');
  if (o.bots === 0 && o.rate > 0) throw new UsageError('--bots must be at least 1 when the simulator runs');
  return o;
}
