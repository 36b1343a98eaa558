// The verification worker's program (ADR 0385, docs/verification.md "A worker for the pages"):
// load this module as a worker and pass the Worker to GatewayClient's `verifyWorker`; it fetches
// the pages of proofs it is asked for and hashes their events' leaves, off the main thread.
import { servePageRequests, type MessageEndpoint } from './verify/page-worker.js';

servePageRequests(globalThis as unknown as MessageEndpoint);
