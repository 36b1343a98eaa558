// The soak's gateways run with the project's node flags unless a run asks for others to compare.
import { describe, expect, it } from 'vitest';
import { parseSoakOptions } from '../../../sandbox/soak/options.js';

describe('soak options: --gateway-node-flags', () => {
  it("is the project's flags when not given", () => {
    expect(parseSoakOptions([]).gatewayNodeFlags).toBeNull();
  });

  it('takes a space-separated list, or none', () => {
    expect(parseSoakOptions(['--gateway-node-flags', '--max-semi-space-size=32 --trace-gc']).gatewayNodeFlags).toEqual(['--max-semi-space-size=32', '--trace-gc']);
    expect(parseSoakOptions(['--gateway-node-flags', '']).gatewayNodeFlags).toEqual([]);
  });

  it('refuses a missing list or anything that is not a flag', () => {
    expect(() => parseSoakOptions(['--gateway-node-flags'])).toThrow(/needs a/);
    expect(() => parseSoakOptions(['--gateway-node-flags', 'max-semi-space-size=32'])).toThrow(/node flags only/);
  });
});
