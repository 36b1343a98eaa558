/**
 * Optional libsodium (sodium-native) for ed25519 signature checks: about half the CPU of
 * node:crypto's OpenSSL verify on the same machine. Loaded dynamically so the engine still runs
 * (with node:crypto) where sodium-native has no prebuilt binary for the platform.
 */
import { createRequire } from 'node:module';

/** The slice of sodium-native the engine uses (the package ships no types). */
export interface SodiumLib {
  crypto_sign_verify_detached(signature: Buffer, message: Buffer, publicKey: Buffer): boolean;
}

export interface LoadedSodium {
  lib: SodiumLib;
  /** Absolute path of the package entry, for worker threads to `require` the same module. */
  path: string;
}

let loaded: Promise<LoadedSodium | null> | undefined;

/** sodium-native, or null when it cannot be loaded (no prebuild for this platform, not installed). */
export function loadSodium(): Promise<LoadedSodium | null> {
  loaded ??= (async () => {
    try {
      const name = 'sodium-native';
      const mod = (await import(name)) as { default?: SodiumLib } & Partial<SodiumLib>;
      const lib = (mod.default ?? mod) as SodiumLib;
      if (typeof lib.crypto_sign_verify_detached !== 'function') return null;
      return { lib, path: createRequire(import.meta.url).resolve(name) };
    } catch {
      return null;
    }
  })();
  return loaded;
}
