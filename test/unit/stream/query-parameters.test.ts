// /v1/stream refuses unknown query parameters (a misspelt filter would otherwise stream everything)
// and knows exactly the agreed list.
import { describe, expect, it } from 'vitest';
import { parseSubscription, STREAM_QUERY_PARAMETERS } from '../../../src/stream/subscription.js';

const parse = (q: string) => parseSubscription(new URLSearchParams(q), null);

describe('stream query parameters', () => {
  it('refuses a misspelt filter with 400 naming it', () => {
    expect(() => parse('market=BTC-PERP')).toThrow(/unknown query parameter "market"/);
    expect(() => parse('kinds=trade&Kinds=trade')).toThrow(/unknown query parameter "Kinds"/);
  });

  it('knows exactly the agreed list, including epoch, heartbeat and snapshot', () => {
    expect([...STREAM_QUERY_PARAMETERS].sort()).toEqual(
      ['kinds', 'markets', 'intervals', 'party', 'since', 'control', 'user', 'sessionId', 'sig', 'epoch', 'heartbeat', 'snapshot'].sort(),
    );
    expect(() => parse('markets=BTC-PERP&since=1&epoch=e1&heartbeat=10&snapshot=false')).not.toThrow();
  });
});
