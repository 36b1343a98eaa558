// The fault schedule: what is injected, when (seconds after the soak's clients started) and for how long.
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
      { atS: 12, kind: 'sse-drop', forS: 2 },
      { atS: 20, kind: 'gateway-pause', forS: 3 },
      { atS: 28, kind: 'db-stall', forS: 5 },
      { atS: 38, kind: 'reconnect-storm', forS: 0 },
      { atS: 46, kind: 'engine-restart', forS: 2 },
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
