// The span name of a database read: the query function its arrow calls, never a value.
import { describe, expect, it } from 'vitest';
import { statementName } from '../../../src/db/database.js';

describe('statementName', () => {
  it('names the query function called with the sql handle, as written or as a bundler rewrites it', () => {
    expect(statementName(new Function('return (sql) => listFills(sql, { party: "p", limit: 5 })')())).toBe('listFills');
    expect(statementName(new Function('return (sql2) => (0, import_fills.listFills)(sql2, { party: "p" })')())).toBe('listFills');
    expect(statementName(new Function('return async(sql)=>{ const rows = await candleRows(sql, 1); return rows }')())).toBe('candleRows');
    expect(statementName(new Function('return (s) => __vite_ssr_import_3__.balanceOf(s, "party")')())).toBe('balanceOf');
  });

  it('says "query" when the arrow calls no query function with it', () => {
    expect(statementName(new Function('return (sql) => sql`SELECT 1`')())).toBe('query');
    expect(statementName(new Function('return () => 1')())).toBe('query');
  });

  it('names every call of one read site alike (the name is worked out once per source)', () => {
    const site = (party: string) => new Function('p', 'return (sql) => listOrders(sql, { party: p })')(party) as Parameters<typeof statementName>[0];
    const names = ['a', 'b', 'c'].map((p) => statementName(site(p)));
    expect(names).toEqual(['listOrders', 'listOrders', 'listOrders']);
  });
});
