// The open-file limit as the gateway reads it, and the connection limits it derives from it
// (FD_HEADROOM, docs/configuration.md; ADR 0130).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { parseProcLimits, processFileLimit } from '../../../src/config/file-limit.js';
import { connectionBudget } from '../../../src/http/connection-limits.js';

describe('processFileLimit', () => {
  it('is the soft limit a shell started by this process reports (`ulimit -n`)', () => {
    const shell = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    expect(processFileLimit()).toBe(shell === 'unlimited' ? null : Number(shell));
  });

  it('reads the soft column of /proc/self/limits, null when unlimited', () => {
    const text = readFileSync('/proc/self/limits', 'utf8');
    expect(parseProcLimits(text)).toBe(processFileLimit());
    expect(parseProcLimits('Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n')).toBe(1024);
    expect(parseProcLimits('Max open files            unlimited            unlimited            files\n')).toBeNull();
    expect(parseProcLimits('Max processes             63711                63711                processes\n')).toBeNull();
  });
});

describe('connectionBudget', () => {
  it('keeps 5 % of the limit (at least 256) free of streams, and half of that free of any connection', () => {
    expect(connectionBudget(loadConfig({}), 20_000)).toEqual({ fileLimit: 20_000, headroom: 1_000, streams: 19_000, connections: 19_500 });
    expect(connectionBudget(loadConfig({}), 1_024)).toEqual({ fileLimit: 1_024, headroom: 256, streams: 768, connections: 896 });
    expect(connectionBudget(loadConfig({}), 1_048_576)).toEqual({ fileLimit: 1_048_576, headroom: 52_429, streams: 20_000, connections: 1_022_361 });
  });

  it('takes FD_HEADROOM when set, and WS_MAX_CONNECTIONS when it is lower', () => {
    expect(connectionBudget(loadConfig({ FD_HEADROOM: '100' }), 20_000)).toMatchObject({ headroom: 100, streams: 19_900, connections: 19_950 });
    expect(connectionBudget(loadConfig({ FD_HEADROOM: 'auto' }), 20_000)).toMatchObject({ headroom: 1_000 });
    expect(connectionBudget(loadConfig({ WS_MAX_CONNECTIONS: '5000' }), 20_000)).toMatchObject({ streams: 5_000, connections: 19_500 });
    expect(connectionBudget(loadConfig({ FD_HEADROOM: '900' }), 600)).toMatchObject({ streams: 0 });
    expect(() => loadConfig({ FD_HEADROOM: 'lots' })).toThrow(/FD_HEADROOM/);
  });

  it('leaves WS_MAX_CONNECTIONS alone when the limit is unknown or unlimited', () => {
    expect(connectionBudget(loadConfig({}), null)).toEqual({ fileLimit: null, headroom: 0, streams: 20_000, connections: null });
  });
});
