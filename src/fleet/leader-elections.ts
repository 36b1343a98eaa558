// The moment a JetStream stream has a new leader, as the cluster announces it: the new leader
// publishes `$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.<stream>` in the stream's account (nats-server
// 2.9 and later). After a leader dies or stops answering, nothing the relay or a replica does can
// succeed until then, and everything can right after: waiting for the advisory instead of the next
// retry or stall check (each up to 2 s away, more at load) takes that wait out of every stall
// (docs/fleet.md "Behind the engine"; measured in test/e2e/fleet/nats-cluster.test.ts).
import type { NatsConnection, Subscription } from 'nats';

export function leaderElectedSubject(stream: string): string {
  return `$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.${stream}`;
}

/**
 * Calls `onElected` with the new leader's server name at each election of `stream`'s leader, for
 * as long as the connection lives (the client subscribes again after each reconnection, to
 * whichever server it reaches). Returns the subscription; unsubscribe to stop.
 */
export function watchLeaderElections(nc: NatsConnection, stream: string, onElected: (leader: string | null) => void): Subscription {
  const sub = nc.subscribe(leaderElectedSubject(stream));
  void (async () => {
    for await (const m of sub) {
      let leader: string | null = null;
      try {
        leader = (JSON.parse(m.string()) as { leader?: string }).leader ?? null;
      } catch {
        // The advisory's body is informative only: the election itself is what matters.
      }
      onElected(leader);
    }
  })();
  return sub;
}
