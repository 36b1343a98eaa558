import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/env.js';

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('NATS_URL takes a comma-separated list of seeds; NATS_STREAM_REPLICAS 1..5, default 1', () => {
    const c = loadConfig({ NATS_URL: 'nats://n1:4222, nats://n2:4222 ,tls://n3:4222' });
    expect(c.natsUrl).toBe('nats://n1:4222,nats://n2:4222,tls://n3:4222');
    expect(c.natsStreamReplicas).toBe(1);
    expect(c.streamBehindMaxS).toBe(5);
    expect(loadConfig({ NATS_STREAM_REPLICAS: '3' }).natsStreamReplicas).toBe(3);
    expect(errorOf({ NATS_STREAM_REPLICAS: '6' }).message).toContain('NATS_STREAM_REPLICAS');
    expect(errorOf({ NATS_STREAM_REPLICAS: '0' }).message).toContain('NATS_STREAM_REPLICAS');
    expect(errorOf({ NATS_URL: 'nats://n1:4222,,nats://n2:4222' }).message).toContain('empty entry');
    expect(errorOf({ NATS_URL: 'nats://n1:4222,http://n2:4222' }).message).toContain('NATS_URL');
  });

  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      databaseUrl: null,
      engineBaseUrl: 'http://127.0.0.1:8080',
      engineAdminToken: null,
      engineTimeoutMs: 5000,
      wsOrderbookPollMs: 500,
      wsOrderbookDepth: 20,
      authDisabled: false,
      faucetEnabled: false,
      faucetAmount: '1000',
      faucetCooldownS: 3600,
      faucetCeiling: '10000',
      corsOrigins: ['*'],
      vaultOperator: null,
    });
  });

  it('binds every interface and allows no origin by default in production', () => {
    const c = loadConfig({ NODE_ENV: 'production' });
    expect(c.host).toBe('0.0.0.0');
    expect(c.corsOrigins).toEqual([]);
  });

  it('NODE_ENV must be development, production or test: a typo is one clear error, not the development defaults', () => {
    expect(loadConfig({}).nodeEnv).toBe('development');
    for (const v of ['development', 'production', 'test'] as const) expect(loadConfig({ NODE_ENV: v }).nodeEnv).toBe(v);
    expect(() => loadConfig({ NODE_ENV: 'prod' })).toThrow('invalid configuration: NODE_ENV must be one of development, production, test, got "prod"');
    expect(() => loadConfig({ NODE_ENV: 'Production' })).toThrow(/NODE_ENV/);
  });

  it('REDIS_SENTINELS: host:port list, the primary name, WAIT for one replica by default; exclusive with REDIS_URL', () => {
    const c = loadConfig({ REDIS_SENTINELS: '10.0.0.1:26379, redis-s2:26380,[::1]:26381', REDIS_SENTINEL_NAME: 'gw-main', REDIS_PASSWORD: 'p', REDIS_SENTINEL_PASSWORD: 's' });
    expect(c.redisSentinels).toEqual([
      { host: '10.0.0.1', port: 26379 },
      { host: 'redis-s2', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    expect([c.redisSentinelName, c.redisPassword, c.redisSentinelPassword, c.redisWaitReplicas, c.redisUrl]).toEqual(['gw-main', 'p', 's', 1, null]);
    expect(loadConfig({ REDIS_URL: 'redis://r:6379' }).redisWaitReplicas).toBe(0);
    expect(loadConfig({ REDIS_SENTINELS: 'a:1', REDIS_WAIT_REPLICAS: '0' }).redisWaitReplicas).toBe(0);
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:1', REDIS_URL: 'redis://r:6379' })).toThrow(/REDIS_SENTINELS and REDIS_URL are exclusive/);
    expect(() => loadConfig({ REDIS_SENTINELS: 'a' })).toThrow('invalid configuration: REDIS_SENTINELS must be a comma-separated list of host:port, got "a"');
    expect(() => loadConfig({ REDIS_SENTINELS: 'a:70000' })).toThrow(/REDIS_SENTINELS/);
  });

  it('reads every variable it documents', () => {
    const c = loadConfig({
      PORT: '4100',
      DATABASE_URL: 'postgres://u:p@db:5432/idx',
      ENGINE_BASE_URL: 'https://engine.example/',
      ENGINE_ADMIN_TOKEN: 'tok',
      WS_ORDERBOOK_POLL_MS: '250',
      WS_ORDERBOOK_DEPTH: '50',
      AUTH_DISABLED: 'true',
      FAUCET_ENABLED: '1',
      FAUCET_AMOUNT: '250.5',
      FAUCET_COOLDOWN_S: '60',
      FAUCET_CEILING: '5000',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      VAULT_OPERATOR: 'operator-1',
    });
    expect(c).toMatchObject({
      port: 4100,
      databaseUrl: 'postgres://u:p@db:5432/idx',
      engineBaseUrl: 'https://engine.example',
      engineAdminToken: 'tok',
      wsOrderbookPollMs: 250,
      wsOrderbookDepth: 50,
      authDisabled: true,
      faucetEnabled: true,
      faucetAmount: '250.5',
      faucetCooldownS: 60,
      faucetCeiling: '5000',
      corsOrigins: ['https://a.example', 'https://b.example'],
      vaultOperator: 'operator-1',
    });
  });

  it.each([
    ['WS_ORDERBOOK_POLL_MS', 'abc', /WS_ORDERBOOK_POLL_MS must be an integer, got "abc"/],
    ['ENGINE_BASE_URL', 'notaurl', /ENGINE_BASE_URL must be an http\(s\) URL, got "notaurl"/],
    ['ENGINE_BASE_URL', 'ftp://x', /ENGINE_BASE_URL must be an http\(s\) URL/],
    ['PORT', '70000', /PORT must be an integer from 0 to 65535/],
    ['PORT', '1.5', /PORT must be an integer/],
    ['AUTH_DISABLED', 'yes', /AUTH_DISABLED must be true or false, got "yes"/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL must be a postgres:\/\/ URL/],
    ['FAUCET_AMOUNT', '-5', /FAUCET_AMOUNT must be a non-negative decimal/],
    ['FAUCET_CEILING', '1e9', /FAUCET_CEILING must be a non-negative decimal/],
    ['WS_ORDERBOOK_DEPTH', '101', /WS_ORDERBOOK_DEPTH must be an integer from 1 to 100/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of/],
  ])('rejects %s=%s with one line naming the variable', (name, value, message) => {
    const err = errorOf({ [name]: value });
    expect(err.variable).toBe(name);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
  });

  it('never echoes a database password', () => {
    const err = errorOf({ DATABASE_URL: 'mysql://admin:hunter2@db/x' });
    expect(err.message).not.toContain('hunter2');
  });

  it('accepts any integer in range for WS_ORDERBOOK_POLL_MS and rejects everything else (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (value) => {
        const trimmed = value.trim();
        const n = Number(trimmed);
        const valid = /^-?\d+$/.test(trimmed) && n >= 50 && n <= 3_600_000;
        if (trimmed === '') expect(loadConfig({ WS_ORDERBOOK_POLL_MS: value }).wsOrderbookPollMs).toBe(500);
        else if (valid) expect(loadConfig({ WS_ORDERBOOK_POLL_MS: value }).wsOrderbookPollMs).toBe(n);
        else expect(errorOf({ WS_ORDERBOOK_POLL_MS: value }).variable).toBe('WS_ORDERBOOK_POLL_MS');
      }),
      { numRuns: 500 },
    );
  });
});
