/**
 * The proof build lane's fair share (ADR 0379), a part of `bench:console`'s verify part: one party's
 * cold page of proofs, asked from 127.0.0.1, alone and while another client address (127.0.0.2)
 * asks the ten cold pages of a large history at once. Each trial starts a gateway that keeps no
 * answer, so every page is read and built. The victim's page is asked 400 ms after the hog's, when
 * the hog's reads have come back and its builds fill the lane.
 */
import { Agent, request } from 'undici';
import { startGateway } from '../test/support/gateway.js';
import { median } from './stats.js';

export interface FairnessResult {
  /** The victim's page, alone on a gateway that keeps nothing: median of the trials (ms). */
  aloneMs: number;
  /** The same page while the hog's ten pages are in progress: median (ms). */
  underHogMs: number;
  /** Of the hog's ten pages per trial: answered, and refused 429 `proof_pages` (its bound in progress). */
  hogAnswered: number;
  hogRefused: number;
  trials: number;
}


export async function proofFairness(databaseUrl: string, hog: string, victim: string, trials: number): Promise<FairnessResult> {
  const hogAgent = new Agent({ localAddress: '127.0.0.2', connections: 16 });
  const victimAgent = new Agent({ localAddress: '127.0.0.1' });
  const get = async (url: string, dispatcher: Agent): Promise<number> => {
    const r = await request(url, { dispatcher });
    await r.body.arrayBuffer();
    return r.statusCode;
  };
  const alone: number[] = [];
  const underHog: number[] = [];
  let hogAnswered = 0;
  let hogRefused = 0;
  try {
    for (let trial = 0; trial < trials; trial++) {
      for (const withHog of [false, true]) {
        const gw = await startGateway({ DATABASE_URL: databaseUrl, AUTH_DISABLED: 'true', RATE_LIMIT_MAX: '10000000', RATE_LIMIT_IP_MAX: '10000000', PROOF_BUILD_AHEAD: 'false' }, { listen: true, overrides: { live: null } });
        try {
          const hogs = withHog
            ? Array.from({ length: 10 }, (_, k) => get(`${gw.url}/v1/users/${hog}/user-batches/proofs?since=${k * 100}&limit=100`, hogAgent))
            : [];
          if (withHog) await new Promise((r) => setTimeout(r, 400));
          const t = performance.now();
          const status = await get(`${gw.url}/v1/users/${victim}/user-batches/proofs?since=0&limit=10`, victimAgent);
          const ms = performance.now() - t;
          if (status !== 200) throw new Error(`the victim's page answered ${status}`);
          (withHog ? underHog : alone).push(ms);
          for (const s of await Promise.all(hogs)) {
            if (s === 200) hogAnswered++;
            else if (s === 429) hogRefused++;
            else throw new Error(`a hog's page answered ${s}`);
          }
        } finally {
          await gw.close();
        }
      }
    }
  } finally {
    await hogAgent.close();
    await victimAgent.close();
  }
  return { aloneMs: Math.round(median(alone)), underHogMs: Math.round(median(underHog)), hogAnswered, hogRefused, trials };
}
