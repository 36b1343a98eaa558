// Each frame kind is declared once (src/stream/frame-kinds.ts) over the wire vocabulary the client
// shares (packages/client/src/wire/vocabulary.ts); the lists the stream judges filters and
// delivery by are derived from those declarations, and close codes exist only in the vocabulary.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTROL_KINDS, DOMAIN_FRAME_KINDS, ENGINE_EVENT_KINDS, CLOSE_CODES as CLIENT_CLOSE_CODES, reconnectRuleOf } from '../../../packages/client/src/index.js';
import { declarationOf, FILTERABLE_KINDS, FRAME_KIND_DECLARATIONS, OPT_IN_KINDS, schemaFor } from '../../../src/stream/frame-kinds.js';
import { CLOSE_CODES } from '../../../src/stream/close-codes.js';
import { FRAME_KINDS } from '../../../src/contracts/frame.js';

describe('frame kinds, declared once', () => {
  it('declares every kind of the vocabulary exactly once', () => {
    const kinds = FRAME_KIND_DECLARATIONS.map((d) => d.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(kinds.sort()).toEqual([...DOMAIN_FRAME_KINDS, ...ENGINE_EVENT_KINDS, ...CONTROL_KINDS].sort());
  });

  it('derives the filterable kinds and the opt-in kinds from the declarations', () => {
    expect([...FILTERABLE_KINDS].sort()).toEqual([...FRAME_KINDS].sort());
    expect([...OPT_IN_KINDS].sort()).toEqual(['account.update', 'fill', 'open_interest.update', 'order.update', 'orderbook.delta']);
    for (const kind of CONTROL_KINDS) expect(FILTERABLE_KINDS).not.toContain(kind);
  });

  it('gives each kind its schema and scope', () => {
    expect(declarationOf('fill')).toMatchObject({ origin: 'domain', scope: 'party', optIn: true });
    expect(declarationOf('trade')).toMatchObject({ origin: 'domain', scope: 'public', optIn: false });
    expect(declarationOf('engine.order_filled')).toMatchObject({ origin: 'passthrough', scope: 'party-when-present' });
    expect(declarationOf('stream.ack')).toMatchObject({ origin: 'control' });
    expect(schemaFor('engine.order_filled')).toBe(schemaFor('inbound.deposit'));
    expect(schemaFor('no.such_kind')).toBeUndefined();
  });
});

describe('close codes, declared once', () => {
  it('are the vocabulary the client follows', () => {
    expect(CLOSE_CODES).toBe(CLIENT_CLOSE_CODES);
    expect(reconnectRuleOf(4011)).toBe('reset');
    expect(reconnectRuleOf(4008)).toBe('resume');
    expect(reconnectRuleOf(1006)).toBe('resume');
    expect(reconnectRuleOf(1000)).toBe('stop');
  });

  it('are never written as literals in the gateway source', () => {
    const literal = /\.close\(\s*\d{4}\b/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (path.endsWith('.ts') && literal.test(readFileSync(path, 'utf8'))) offenders.push(path);
      }
    };
    walk('src');
    expect(offenders).toEqual([]);
  });
});
