// hash-wasm's SHA-256 alone, in a module of its own: sha256-sync.ts imports it when first needed,
// so that a bundler splits it (and tree-shakes hash-wasm's other algorithms) from a page that
// never verifies (ADR 0370).
export { createSHA256 } from 'hash-wasm';
