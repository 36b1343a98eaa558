// docs/configuration.md's settings table is generated from src/config/env.ts (npm run docs:settings):
// this fails when the document drifts from it, or when a variable is read but not documented.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../../../src/config/env.js';
import { configKey, CONFIGURATION_DOC, renderConfigurationDoc } from '../../../scripts/settings-table.js';

/** Every variable name loadConfig passes to a reader (`int(env, 'PORT', …)`, `raw(env, 'HOST')`, …). */
function variablesRead(): Set<string> {
  const source = readFileSync(join(import.meta.dirname, '../../../src/config/env.ts'), 'utf8');
  const body = source.slice(source.indexOf('export function loadConfig'));
  return new Set([...body.matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]!));
}

describe('the settings table', () => {
  it('in docs/configuration.md is the one generated from src/config/env.ts (run npm run docs:settings)', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    expect(renderConfigurationDoc(doc)).toBe(doc);
  });

  it('documents every variable loadConfig reads, and only those', () => {
    const read = variablesRead();
    expect([...read].sort()).toEqual(SETTINGS.map((s) => s.name).sort());
  });

  it('names each variable once, with a Config field its default is read from', () => {
    const names = SETTINGS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    const defaults = loadConfig({}) as unknown as Record<string, unknown>;
    for (const s of SETTINGS) expect(Object.hasOwn(defaults, configKey(s.name)), s.name).toBe(true);
  });
});
