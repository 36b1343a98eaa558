/** Public surface of the reference engine. */
export { startEngine, type StartEngineOptions, type RunningEngine } from './server.js';
export { EngineCore, CURRENT_VERSION, LEGACY_VERSION, type EngineCoreOptions } from './core.js';
export {
  canonicalJson,
  canonicalJsonSlow,
  merkleRoot,
  MerkleAccumulator,
  leafHash,
  nodeHash,
  eventLeafHash,
  userBatchRoot,
  batchRoot,
  ZERO_ROOT,
  UNCOMMITTED_KINDS,
  partiesOf,
} from './commitments.js';
export { parseDec, formatDec, SCALE } from './decimal.js';
export { DEFAULT_MARKETS, type MarketSpec } from './markets.js';
export { sessionAuthMessage, signedRequestMessage, PARTY_RE } from './sessions.js';
export type * from './types.js';
