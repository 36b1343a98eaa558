// `tsx sandbox/simulator/main.ts`: the market simulator as its own process. Env: ENGINE_BASE_URL
// (default http://127.0.0.1:8080), ENGINE_ADMIN_TOKEN (dev-admin-token), SIM_RATE (20 actions/s),
// SIM_BOTS (8), SIM_SEED (1).
import { startSimulator } from './simulator.js';

function intEnv(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v)) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

const sim = await startSimulator({
  engineUrl: process.env.ENGINE_BASE_URL ?? 'http://127.0.0.1:8080',
  adminToken: process.env.ENGINE_ADMIN_TOKEN ?? 'dev-admin-token',
  rate: intEnv('SIM_RATE', 20),
  bots: intEnv('SIM_BOTS', 8),
  seed: intEnv('SIM_SEED', 1),
  onError: (err) => process.stderr.write(`simulator: ${err.message}\n`),
});
console.log(JSON.stringify({ msg: 'simulator running', parties: sim.parties.length }));
const report = setInterval(() => console.log(JSON.stringify({ msg: 'simulator stats', ...sim.stats() })), 30_000);
const shutdown = (): void => {
  clearInterval(report);
  void sim.stop().then(() => process.exit(0));
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
