// The limits of docs/security.md: defaults, the derived per-IP budget, and the one cross-check.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';

describe('security settings', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      rateLimitMax: 600,
      rateLimitIpMax: 1200,
      rateLimitWindowMs: 60_000,
      replayMemoryMax: 1_000_000,
      httpHeadersTimeoutMs: 10_000,
      httpRequestTimeoutMs: 30_000,
      httpKeepAliveTimeoutMs: 5_000,
      httpIdleTimeoutMs: 60_000,
      httpMaxConnectionsPerIp: 512,
      wsMaxConnectionsPerIp: 100,
    });
  });

  it('derives the per-IP budget from RATE_LIMIT_MAX unless set', () => {
    expect(loadConfig({ RATE_LIMIT_MAX: '50' }).rateLimitIpMax).toBe(100);
    expect(loadConfig({ RATE_LIMIT_MAX: '50', RATE_LIMIT_IP_MAX: '7' }).rateLimitIpMax).toBe(7);
  });

  it('refuses a header deadline longer than the request deadline, and malformed values', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).toThrow('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
    expect(() => loadConfig({ WS_MAX_CONNECTIONS_PER_IP: '-1' })).toThrow('WS_MAX_CONNECTIONS_PER_IP');
    // 0: no per-client stream cap (behind a proxy that caps per client itself).
    expect(loadConfig({ WS_MAX_CONNECTIONS_PER_IP: '0' }).wsMaxConnectionsPerIp).toBe(0);
    expect(() => loadConfig({ WS_CLIENT_MESSAGES_PER_S: '0' })).toThrow('WS_CLIENT_MESSAGES_PER_S');
    expect(() => loadConfig({ SSE_MAX_EVENT_BYTES: '10' })).toThrow('SSE_MAX_EVENT_BYTES');
    expect(() => loadConfig({ HTTP_IDLE_TIMEOUT_MS: '5000' })).toThrow('HTTP_IDLE_TIMEOUT_MS must exceed ENGINE_TIMEOUT_MS');
    expect(loadConfig({ HTTP_MAX_CONNECTIONS_PER_IP: '0' }).httpMaxConnectionsPerIp).toBe(0);
  });
});
