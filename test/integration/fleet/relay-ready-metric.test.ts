// bff_relay_ready, what RelayNoneReady and RelayStandbyMissing read: 1 only while the relay has both
// NATS and the engine's event stream connected (its /readyz), whatever its scrapes say.
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import { EngineRelay } from '../../../src/relay/relay.js';
import { fleetServices, forgetFleetState, NATS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';

const available = await fleetServices({ nats: true, redis: true });

describe.skipIf(!available)('bff_relay_ready', () => {
  const name = uniqueName('relayready');
  let engine: ScriptedEngine | undefined;
  let relay: EngineRelay | undefined;
  afterAll(async () => {
    await relay?.stop();
    await engine?.close();
    await forgetFleetState(name.toUpperCase(), `${name}:`);
  });

  it('is 0 before the relay connects, 1 while NATS and the engine stream are connected, 0 when the engine stream is refused', async () => {
    engine = await startScriptedEngine();
    const registry = new Registry();
    relay = new EngineRelay({
      url: NATS_URL,
      stream: name.toUpperCase(),
      subject: `${name}.events`,
      maxAgeS: 600,
      maxBytes: 16 * 1024 * 1024,
      engineStreamUrl: `${engine.url}/v1/admin/events/stream`,
      token: engine.token,
      idleMs: 10_000,
      emptyStreamStartAfter: async () => 0,
      fillFrom: null,
      logger: pino({ level: 'silent' }),
      registry,
    });
    const ready = async () => /^bff_relay_ready (\d)$/m.exec(await registry.metrics())![1];
    expect(await ready()).toBe('0');
    await relay.start();
    await waitFor(async () => (await ready()) === '1', 10_000, 'ready');
    // The engine refuses the stream: the relay is scraped as before, but not ready.
    engine.streamFailStatus = 503;
    engine.dropAll();
    await waitFor(async () => (await ready()) === '0', 10_000, 'not ready');
  });
});
