// The payload of an `engine.order_filled` event, as the projections read it (docs/engine.md
// "Event stream"). Engine events and frames themselves are in src/contracts/.

export type { FillLeg, FillPayload } from '../contracts/engine-event.js';
