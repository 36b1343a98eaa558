// `npm start` flags and environment: defaults, overrides (flags win over env), and clear errors.
import { describe, expect, it } from 'vitest';
import { parseOptions, UsageError } from '../../../sandbox/stack/options.js';

describe('stack options', () => {
  it('has development defaults', () => {
    expect(parseOptions([], {}, '/repo')).toEqual({
      externalDb: null, reset: false, dataDir: '/repo/.data', enginePort: 8080, gatewayPort: 4000, consolePort: 4100, dbPort: 54329,
      rate: 20, bots: 8, adminToken: 'dev-admin-token', authDisabled: false, logLevel: 'warn',
    });
  });

  it('reads env and lets flags win', () => {
    const o = parseOptions(
      ['--reset', '--rate', '50', '--port', '0', '--external-db', 'postgres://u@h:5432/db', '--no-auth', '--data-dir', 'tmp/x'],
      { SIM_RATE: '5', PORT: '4100', ENGINE_PORT: '8181', STACK_DATABASE_URL: 'postgres://other/db', ENGINE_ADMIN_TOKEN: 'tok' },
      '/repo',
    );
    expect(o).toMatchObject({ reset: true, rate: 50, gatewayPort: 0, enginePort: 8181, externalDb: 'postgres://u@h:5432/db', authDisabled: true, dataDir: '/repo/tmp/x', adminToken: 'tok' });
  });

  it.each([
    [['--rate', 'fast'], '--rate must be an integer from 0 to 100000, got "fast"'],
    [['--port', '70000'], '--port must be a port number, got "70000"'],
    [['--external-db', 'mysql://x'], '--external-db must be a postgres:// URL'],
    [['--rate'], '--rate needs a value'],
    [['--bogus'], 'unknown option --bogus'],
    [['--bots', '0'], '--bots must be at least 1 when the simulator runs'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseOptions(argv, {}, '/repo')).toThrow(new UsageError(message));
  });
});
