// The fault schedule: what is injected, when (seconds after the stack is up and the soak's clients
// started) and for how long.
export type FaultKind = 'sse-drop' | 'gateway-pause' | 'db-stall' | 'reconnect-storm' | 'engine-restart';

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
      { atS: 16, kind: 'gateway-pause', forS: 3 },
      { atS: 24, kind: 'db-stall', forS: 5 },
      { atS: 33, kind: 'reconnect-storm', forS: 0 },
      { atS: 40, kind: 'engine-restart', forS: 2 },
    ];
  }
  return [
    { atS: 40, kind: 'sse-drop', forS: 2 },
    { atS: 90, kind: 'gateway-pause', forS: 5 },
    { atS: 140, kind: 'db-stall', forS: 10 },
    { atS: 190, kind: 'reconnect-storm', forS: 0 },
    { atS: 240, kind: 'engine-restart', forS: 3 },
    { atS: 300, kind: 'sse-drop', forS: 8 },
    { atS: 350, kind: 'gateway-pause', forS: 12 },
    { atS: 400, kind: 'db-stall', forS: 20 },
    { atS: 450, kind: 'reconnect-storm', forS: 0 },
    { atS: 500, kind: 'engine-restart', forS: 5 },
  ];
}
