// The fault schedule: what is injected, when (seconds after the stack is up and the soak's clients
// started) and for how long.
export type FaultKind =
  | 'sse-drop'
  | 'gateway-pause'
  | 'db-stall'
  | 'db-freeze'
  | 'reconnect-storm'
  | 'engine-trickle'
  | 'sse-endless-line'
  | 'engine-restart';

export interface Fault {
  atS: number;
  kind: FaultKind;
  /** How long the fault lasts (s): the proxy refusing, the process stopped, the engine down. */
  forS: number;
}

/** Short (CI): every fault once. Default: two rounds, the second with longer faults. */
export function faultSchedule(short: boolean): Fault[] {
  if (short) {
    return [
      { atS: 8, kind: 'sse-drop', forS: 2 },
      { atS: 13, kind: 'gateway-pause', forS: 3 },
      { atS: 19, kind: 'db-stall', forS: 4 },
      { atS: 25, kind: 'db-freeze', forS: 3 },
      { atS: 31, kind: 'reconnect-storm', forS: 0 },
      { atS: 35, kind: 'engine-trickle', forS: 7 },
      { atS: 45, kind: 'sse-endless-line', forS: 3 },
      { atS: 51, kind: 'engine-restart', forS: 2 },
    ];
  }
  return [
    { atS: 40, kind: 'sse-drop', forS: 2 },
    { atS: 65, kind: 'db-freeze', forS: 5 },
    { atS: 90, kind: 'gateway-pause', forS: 5 },
    { atS: 115, kind: 'engine-trickle', forS: 8 },
    { atS: 140, kind: 'db-stall', forS: 10 },
    { atS: 165, kind: 'sse-endless-line', forS: 3 },
    { atS: 190, kind: 'reconnect-storm', forS: 0 },
    { atS: 240, kind: 'engine-restart', forS: 3 },
    { atS: 300, kind: 'sse-drop', forS: 8 },
    { atS: 325, kind: 'db-freeze', forS: 10 },
    { atS: 350, kind: 'gateway-pause', forS: 12 },
    { atS: 375, kind: 'engine-trickle', forS: 12 },
    { atS: 400, kind: 'db-stall', forS: 20 },
    { atS: 425, kind: 'sse-endless-line', forS: 5 },
    { atS: 450, kind: 'reconnect-storm', forS: 0 },
    { atS: 500, kind: 'engine-restart', forS: 5 },
  ];
}

/**
 * `faults` run `times` rounds in a row: each round starts 30 s after the previous one's last fault
 * ended, so the gateway is quiet between rounds (memory that adds up round after round is a leak;
 * memory that stays at the first round's mark is a high-water mark).
 */
export function repeatSchedule(faults: Fault[], times: number): Fault[] {
  if (faults.length === 0 || times <= 1) return faults;
  const first = Math.min(...faults.map((f) => f.atS));
  const period = Math.max(...faults.map((f) => f.atS + f.forS)) - first + 30;
  return Array.from({ length: times }, (_, k) => faults.map((f) => ({ ...f, atS: f.atS + k * period }))).flat();
}
