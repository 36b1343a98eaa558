// The published client keeps its own list of stream kinds (it is packaged alone and may not import
// the gateway), so a kind the gateway adds or drops must reach the client too: the two lists are
// held equal here, as the generated wire types are by their own drift test.
import { describe, expect, it } from 'vitest';
import { DOMAIN_FRAME_KINDS, ENGINE_EVENT_KINDS as CLIENT_ENGINE_KINDS } from '../../../packages/client/src/index.js';
import { ENGINE_EVENT_KINDS } from '../../../src/contracts/engine-event.js';
import { DOMAIN_KINDS } from '../../../src/contracts/frame.js';

describe("the client's stream kinds", () => {
  it('are the engine event kinds the gateway forwards', () => {
    expect([...CLIENT_ENGINE_KINDS].sort()).toEqual([...ENGINE_EVENT_KINDS].sort());
  });

  it('are the domain frame kinds the gateway sends', () => {
    expect([...DOMAIN_FRAME_KINDS].sort()).toEqual([...DOMAIN_KINDS].sort());
  });
});
