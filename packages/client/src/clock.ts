// The client's idea of the gateway's time. Signed calls carry a timestamp the gateway accepts
// within ±30 s of its own clock, so a device whose clock is off (common on phones and VMs) fails
// every signed call. The offset is learnt from `GET /v1/time` (`syncTime()`) or from the
// `serverTime` the gateway puts in the 401 of a timestamp outside the window, and applied to
// every signature from then on.
export class Clock {
  /** Server time minus local time, in ms. */
  offsetMs = 0;

  constructor(private readonly local: () => number = Date.now) {}

  now(): number {
    return Math.round(this.local() + this.offsetMs);
  }

  /**
   * Learns the offset from a server time read between `sentAt` and `receivedAt` (local ms): the
   * server read its clock somewhere in that interval, so its middle is the best estimate.
   */
  learn(serverTime: number, sentAt: number, receivedAt = sentAt): void {
    this.offsetMs = serverTime - (sentAt + receivedAt) / 2;
  }

  localNow(): number {
    return this.local();
  }
}
