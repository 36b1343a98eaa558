// Command line of `npm run soak`. Flags only; the defaults are the documented run.
export interface SoakOptions {
  short: boolean;
  /** Seconds of load after the stack is up (faults, then a quiet tail); then 8 s of catching up. */
  durationS: number;
  /** Simulator actions per second. */
  rate: number;
  /** Clients of each reconnect storm. */
  stormClients: number;
  /** Run only these faults of the schedule (null: all). */
  only: string[] | null;
  /** Write the figures into docs/reliability.md (between its soak markers). */
  writeDocs: boolean;
  /** Run the (selected) schedule this many times in a row: whether a fault's memory adds up or stays a high-water mark. */
  repeat: number;
  /** Node flags of the soak's gateways (null: the project's, sandbox/stack/gateway-node-flags.ts). */
  gatewayNodeFlags: string[] | null;
}

export const USAGE = `usage: npm run soak -- [--short] [--duration <s>] [--rate <n>] [--storm <n>]
  --short           CI mode: about 90 s, each fault once (default: about 10 minutes, each fault twice)
  --duration <s>    seconds of load after the stack is up (default 570, or 60 with --short)
  --rate <n>        simulator actions per second (default 100)
  --storm <n>       clients per reconnect storm (default 200, or 100 with --short)
  --only <kinds>    only these faults (comma list of sse-drop, gateway-pause, db-stall, db-freeze, reconnect-storm,
                    engine-trickle, sse-endless-line, engine-restart)
  --repeat <n>      run the (selected) faults n times in a row, 30 s apart (default 1): does memory add up
                    with each round or stay at the first round's high-water mark?
  --gateway-node-flags <flags>
                    node flags of the soak's gateways instead of the project's (space-separated; '' for none),
                    to measure one against another (ADR 0163)
  --write-docs      write the figures into docs/reliability.md`;

export function parseSoakOptions(argv: string[]): SoakOptions {
  const short = argv.includes('--short');
  const o: SoakOptions = { short, durationS: short ? 60 : 570, rate: 100, stormClients: short ? 100 : 200, writeDocs: false, only: null, repeat: 1, gatewayNodeFlags: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const num = (min: number, max: number): number => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < min || v > max) throw new Error(`${flag} needs an integer from ${min} to ${max}\n${USAGE}`);
      return v;
    };
    if (flag === '--short') continue;
    else if (flag === '--write-docs') o.writeDocs = true;
    else if (flag === '--only') {
      const kinds = (argv[++i] ?? '').split(',').filter(Boolean);
      const known = ['sse-drop', 'gateway-pause', 'db-stall', 'db-freeze', 'reconnect-storm', 'engine-trickle', 'sse-endless-line', 'engine-restart'];
      const bad = kinds.filter((k) => !known.includes(k));
      if (kinds.length === 0 || bad.length > 0) throw new Error(`--only needs a comma list of ${known.join(', ')}\n${USAGE}`);
      o.only = kinds;
    }
    else if (flag === '--duration') o.durationS = num(30, 7200);
    else if (flag === '--rate') o.rate = num(1, 10_000);
    else if (flag === '--storm') o.stormClients = num(1, 5000);
    else if (flag === '--repeat') o.repeat = num(1, 100);
    else if (flag === '--gateway-node-flags') {
      const flags = argv[++i];
      if (flags === undefined) throw new Error(`--gateway-node-flags needs a (possibly empty) list of node flags\n${USAGE}`);
      o.gatewayNodeFlags = flags.split(' ').filter(Boolean);
      if (o.gatewayNodeFlags.some((f) => !f.startsWith('-'))) throw new Error(`--gateway-node-flags takes node flags only (each starting with -)\n${USAGE}`);
    }
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return o;
}
