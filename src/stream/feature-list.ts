// The live features' hooks, called in list order with the guarantees of LiveFeature
// (src/contracts/live-feature.ts): a throw from one feature's hook is logged with its name and
// costs the other features and the clients nothing. The runtime (src/live.ts) says when; this
// says how, for every hook alike.
import type { FastifyBaseLogger } from 'fastify';
import type { EngineEvent, FillPayload } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import type { LiveFeature } from '../contracts/live-feature.js';
import type { Subscription } from './subscription.js';

type Feature = LiveFeature<Subscription>;

export class FeatureList {
  /** The features with a `frame` hook, found once: every published frame walks only these. */
  private readonly frameFollowers: readonly Feature[];
  /** The features with an `endOfBatch` hook, found once (in list order). */
  private readonly batchEnders: readonly Feature[];

  constructor(
    readonly features: readonly Feature[],
    private readonly logger: FastifyBaseLogger,
  ) {
    this.frameFollowers = features.filter((f) => f.frame !== undefined);
    this.batchEnders = features.filter((f) => f.endOfBatch !== undefined);
  }

  /** One event to every feature in list order; each one's frames go to `publish` before the next feature is called. */
  event(event: EngineEvent, fill: FillPayload | null, publish: (frames: readonly Frame[]) => void): void {
    for (const feature of this.features) {
      if (!feature.event) continue;
      let out: readonly Frame[] | void;
      try {
        out = feature.event(event, fill);
      } catch (err) {
        this.logger.error({ err, seq: event.seq, kind: event.kind, feature: feature.name }, 'live feature failed on an event');
        continue;
      }
      if (out && out.length > 0) publish(out);
    }
  }

  /** The batch the source delivered together has ended. */
  endOfBatch(): void {
    for (const feature of this.batchEnders) this.guard('endOfBatch', feature, () => feature.endOfBatch!());
  }

  /** A frame was published on the hub. */
  frame(frame: Frame): void {
    for (const feature of this.frameFollowers) this.guard('frame', feature, () => feature.frame!(frame), { seq: frame.seq, kind: frame.kind });
  }

  /** The engine's history was replaced; the next event is after `head` of the new one. */
  replaced(head: number): void {
    for (const feature of this.features) this.guard('replaced', feature, () => feature.replaced?.(head));
  }

  /** Calls `hook` for every feature in list order (awaited concurrently when it returns a promise); a failure is logged. */
  async each(what: string, hook: (feature: Feature) => void | Promise<void>): Promise<void> {
    await Promise.all(
      this.features.map(async (feature) => {
        try {
          await hook(feature);
        } catch (err) {
          this.logger.error({ err, feature: feature.name }, `live feature failed: ${what}`);
        }
      }),
    );
  }

  /** A connection's snapshot: each feature's part in list order (later parts in the same order). */
  snapshot(sub: Subscription): { frames: Frame[]; later: Promise<Frame[]> | null } {
    const frames: Frame[] = [];
    const later: Array<Promise<readonly Frame[]>> = [];
    for (const feature of this.features) {
      let part;
      try {
        part = feature.snapshot?.(sub);
      } catch (err) {
        this.logger.error({ err, feature: feature.name }, 'live feature failed: snapshot');
        continue;
      }
      if (!part) continue;
      frames.push(...part.frames);
      if (part.later) later.push(part.later.catch(() => []));
    }
    return { frames, later: later.length === 0 ? null : Promise.all(later).then((parts) => parts.flat()) };
  }

  /** Runs one feature's hook; a throw is logged with the feature's name and the others still run. */
  private guard(what: string, feature: Feature, hook: () => void, fields: object = {}): void {
    try {
      hook();
    } catch (err) {
      this.logger.error({ err, feature: feature.name, ...fields }, `live feature failed: ${what}`);
    }
  }
}
