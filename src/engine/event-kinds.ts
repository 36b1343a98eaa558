// Every kind of event on the engine's admin stream (docs/engine.md "Event stream"). The REST `type` filter
// accepts exactly these, and the stream forwards every one of them unchanged as a passthrough frame.
export const ENGINE_EVENT_KINDS = [
  'engine.tick_start',
  'inbound.deposit',
  'inbound.withdrawal_request',
  'engine.approve_submitted',
  'engine.reject_submitted',
  'session.authorized',
  'inbound.order',
  'engine.order_placed',
  'engine.order_filled',
  'engine.order_cancelled',
  'engine.order_rejected',
  'engine.trigger_set',
  'engine.trigger_cancelled',
  'engine.trigger_fired',
  'engine.attached_resolved',
  'engine.user_batch_committed',
  'outbound.batch_committed',
] as const;

export type EngineEventKind = (typeof ENGINE_EVENT_KINDS)[number];
