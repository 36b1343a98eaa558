// Browser-safe entry of @gateway/client: no `node:` imports anywhere below this file.
// `getUserMe` lives in the Node entry (`@gateway/client/node`): it needs a GET body.
export { GatewayClient, type ClientOptions, type Page, type Via } from './client.js';
export { GatewayError, type ErrorBody } from './errors.js';
export { outcomeUnknown } from './unknown-outcome.js';
export { defaultRetry, backoffDelay, isRetryableStatus, type RetryPolicy } from './retry.js';
export { Session, localParty, prepareSession, sessionAuthMessage, requestMessage, MAX_SESSION_MS, MAX_TS_LEAD_MS, type PartySigner, type SignedHeaders } from './signing.js';
export { generateKeyPair, keyPairFromSeed, signHex, type CryptoKey, type Ed25519KeyPair } from './ed25519.js';
export { Transport, buildTarget, fetchSender, type Sender, type SendRequest, type SendResult, type Query, type CallOptions, type SessionRenewer } from './transport.js';
export { Clock } from './clock.js';
export { memoryStore, indexedDbStore, loadOrCreateParty, saveSession, restoreSession, keepPartySession, type KeyValueStore } from './persist.js';
export {
  StreamClient,
  type StreamMessage,
  type StreamOptions,
  type StreamState,
  type StreamSubscription,
  type StreamUnsubscription,
  type AppliedFilters,
  type MarketFilter,
  type MarketList,
  type WebSocketCtor,
  type WebSocketLike,
} from './stream.js';
export { PositionsStore, type PositionState } from './positions.js';
export {
  orderMargin,
  triggerWouldFire,
  legsWouldFire,
  attachedWouldFire,
  tpslWouldFire,
  isTriggerWouldFire,
  toUnits,
  fromUnits,
  type Account,
  type AccountUpdateFrame,
  type AccountPosition,
  type AccountOrder,
  type OrderMargin,
  type OrderMarginInput,
  type TriggerWouldFire,
  type TriggerCheck,
} from './account.js';
export { CLOSE_CODES, CONTROL_KINDS, reconnectRuleOf, type CloseCode, type ReconnectRule } from './wire/vocabulary.js';
export {
  ENGINE_EVENT_KINDS,
  DOMAIN_FRAME_KINDS,
  CANDLE_INTERVALS,
  KNOWN_MARKETS,
  market,
  type EnginePayloads,
  type EngineEventKind,
  type EngineEventOf,
  type TypedEngineEvent,
  type FillLeg,
  type EngineOrder,
  type EnginePosition,
  type EngineTrigger,
  type FrameKind,
  type Interval,
  type KnownMarket,
  type MarketOf,
  type UnknownMarket,
} from './engine-events.js';
export { DecimalInputError } from './decimal-input.js';
export { createToastThrottle, type ToastThrottle } from './toast.js';
export { verifyUserBatch, userRootOf, foldPath, type BatchVerdict, type VerifyStep } from './verify/verify-batch.js';
export { verifyHistory, type HistoryOptions, type HistoryProgress, type HistoryVerdict, type HistorySource, type ChainBreak } from './verify/history.js';
export {
  verifyAccount,
  checkAccount,
  type AccountVerdict,
  type AccountOptions,
  type AccountSource,
  type AccountProblem,
  type PendingItem,
  type AccountInputs,
  type CheckedValue,
  type CheckedPosition,
  type CheckStatus,
} from './verify/verify-account.js';
export { Ledger, feeOf, grownEntry, realizedOf, parseWire, formatWire, TAKER_FEE_RATE, type Discrepancy, type LedgerEvent, type LedgerField, type LedgerPosition } from './verify/ledger.js';
export { canonicalJson, leafText, holdersOf, heldBy, ZERO_ROOT, type CommittedEvent, type PathStep } from './verify/scheme.js';
export { useSha256, sha256Engine, type Sha256Engine } from './verify/sha256-sync.js';
export { workerSender, type VerifyWorker } from './verify/worker-sender.js';
export { Replay } from './verify/replay.js';
export type { ProofPageBytes } from './verify/proof-page.js';
export type { PageScan } from './verify/page-scan.js';
export { servePageRequests, VERIFY_WORKER_PROTOCOL, type MessageEndpoint } from './verify/page-worker.js';
export type * from './types.js';
export { DeltaOrderBook, bookChecksum, type BookLevel, type BookApplyResult } from './order-book.js';
export { BookFrameGate } from './book-gate.js';
export { OrderBookFeed, type OrderBookFeedOptions, type BookView } from './book-feed.js';
export { UserOrdersStore, UserFillsStore, isTerminal, type OrderUpdate, type UserFill } from './user-channels.js';
export { toTrade } from './trades.js';
export { LiveConnection, type LiveConnectionOptions, type Interest, type Watch, type WatchHandlers } from './connection.js';
export {
  formatPrice,
  formatSize,
  formatMoney,
  formatPercent,
  formatDecimal,
  readableDecimals,
  priceDecimals,
  roundDecimal,
  addDecimal,
  subDecimal,
  mulDecimal,
  divDecimal,
  compareDecimal,
  sumDecimals,
  isNegativeDecimal,
  type DisplayRules,
  type PriceFormat,
} from './format.js';
export { MAX_BATCH_ITEMS, signPlace, signCancel, sendBatch, placeOrders, cancelOrders, replaceOrder, orderByClientId, cancelAll, itemSucceeded, itemFailure, type SignedPlace, type SignedCancel, type SignedItem, type BatchOptions, type ItemOutcome, type ItemRefusal, type PlaceOutcome, type CancelOutcome, type BatchResult, type ReplaceResult, type DeskVia, type ClientOrder, type OpenOrderRef, type CancelAllOptions, type CancelAllResult } from './desk.js';
export { deadMansSwitch, type DeadMansSwitchOptions, type DeadMansSwitchHandle, type ArmedSwitch } from './dead-mans-switch.js';
