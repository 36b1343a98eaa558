// What the live runtime (src/live.ts) and the list of live features (src/live-features.ts) agree
// on: the runtime gives the features a way to publish and the current seq; the list gives back
// its features in order, the answers to the HTTP edge's questions, and where the stream starts.
import type { Frame } from '../contracts/frame.js';
import type { LiveFeature } from '../contracts/live-feature.js';
import type { LiveFeatureQueries } from './live-view.js';
import type { Subscription } from './subscription.js';

/** What the runtime gives the features it is composed with. */
export interface LiveContext {
  /** Publishes a frame on the hub (and to every feature's `frame`); the number of recipients. */
  publish(frame: Frame): number;
  /** The seq of the event being delivered, else the source's position; null while live-only and empty. */
  head(): number | null;
}

/** The features, in the order events reach them, what the HTTP edge may ask of them, and where the stream starts. */
export interface LiveComposition {
  readonly features: readonly LiveFeature<Subscription>[];
  readonly queries: LiveFeatureQueries;
  /** The seq to start after, given where the source could replay from (null: live from the engine's head). */
  startPoint(replayFrom: number | null): Promise<number | null>;
}

export type ComposeLiveFeatures = (context: LiveContext) => LiveComposition;
