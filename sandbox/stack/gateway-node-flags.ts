// Node flags of every gateway process the project starts (npm start, npm run fleet, the soak), the
// same as deploy/systemd, deploy/kubernetes and `npm run gateway` (ADR 0163). Node 24 lets V8 grow
// the young generation to 128 MiB (Node 20: 32 MiB); the gateway's short-lived garbage (frames,
// parsed events, requests) does not need it, and the pages it once used stay resident, so RSS kept
// a high-water mark about 100 MiB above what 16 MiB semi-spaces give, for no CPU saved (measured in
// docs/operations.md "Memory").
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
