// Checks the gateway's layering from its real imports (every `import`/`export … from`, type-only
// included, and dynamic `import()`), as the TypeScript compiler reads them:
//
//   0  contracts/             the seams (the clock among them), which every unit may use
//   1  config/  client-address.ts  decimal.ts  deadline.ts  dependency-state.ts  fair-share.ts  metrics.ts  tracing/
//   2  db/  engine/  projections/
//   3  auth/  markets/  stream/  fleet/  commitments/
//   4  http/
//   5  live.ts  relay/       the composition root, in the order its parts build on each other:
//   6  live-features.ts        the live runtime and the relay, the live features listed once and
//      live-source.ts          the source of engine events chosen, the dependencies, the app, the process
//   7  deps.ts
//   8  app.ts
//   9  main.ts
//
// A module may import its own unit (folder or root file) and any unit of a LOWER layer; never a
// unit of its own layer (no two of those folders import each other) nor of a higher one. A file
// under src/ that belongs to no unit fails the check too, so a new folder has to be placed here.
//
// `npm run check:layers` (and CI, .ci/run). Exit code 1 and one line per offending import.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['contracts'],
  ['config', 'client-address.ts', 'decimal.ts', 'deadline.ts', 'dependency-state.ts', 'fair-share.ts', 'metrics.ts', 'tracing'],
  ['db', 'engine', 'projections'],
  ['auth', 'markets', 'stream', 'fleet', 'commitments'],
  ['http'],
  ['live.ts', 'relay'],
  ['live-features.ts', 'live-source.ts'],
  ['deps.ts'],
  ['app.ts'],
  ['main.ts'],
];

/**
 * Files outside src/ that the gateway may import, as the bottom layer: each must import nothing
 * at all (checked). The commitment scheme and the stream's wire vocabulary (kinds, close codes) are
 * written once, in the published client (which must stand alone in its package), and the gateway
 * uses those same files.
 */
export const SHARED_FROM_OUTSIDE: readonly string[] = ['../packages/client/src/verify/scheme.ts', '../packages/client/src/wire/vocabulary.ts'];

export interface Violation {
  from: string;
  to: string;
  reason: string;
}

/** The unit of a path relative to src/ ("http/reads/x.ts" → "http", "live.ts" → "live.ts"). */
function unitOf(rel: string): string {
  return rel.split('/')[0]!;
}

function layerOf(unit: string): number | null {
  const i = LAYERS.findIndex((layer) => layer.includes(unit));
  return i < 0 ? null : i;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Relative specifiers of every import, re-export and dynamic import in `text`. */
export function importsOf(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('.'));
}

/** Every import under `srcDir` that breaks the layering. */
export function checkLayers(srcDir: string): Violation[] {
  const violations: Violation[] = [];
  for (const shared of SHARED_FROM_OUTSIDE) {
    const path = resolve(srcDir, shared);
    if (!existsSync(path)) continue; // a tree without it (the tests' small trees); tsc reports a missing import
    const imports = ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles;
    if (imports.length > 0) violations.push({ from: shared, to: imports[0]!.fileName, reason: 'a file shared from outside src/ must import nothing' });
  }
  for (const file of sourceFiles(srcDir).sort()) {
    const from = relative(srcDir, file).split(sep).join('/');
    const fromUnit = unitOf(from);
    const fromLayer = layerOf(fromUnit);
    if (fromLayer === null) {
      violations.push({ from, to: '', reason: `"${fromUnit}" is in no layer (add it to LAYERS in scripts/check-layers.ts)` });
      continue;
    }
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const target = relative(srcDir, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))).split(sep).join('/');
      if (target.startsWith('..')) {
        if (!SHARED_FROM_OUTSIDE.includes(target)) violations.push({ from, to: spec, reason: 'imports from outside src/' });
        continue;
      }
      const toUnit = unitOf(target);
      if (toUnit === fromUnit) continue;
      const toLayer = layerOf(toUnit);
      if (toLayer === null) violations.push({ from, to: target, reason: `"${toUnit}" is in no layer` });
      else if (toLayer > fromLayer) violations.push({ from, to: target, reason: `layer ${fromLayer} (${fromUnit}) imports layer ${toLayer} (${toUnit}): imports point down` });
      else if (toLayer === fromLayer) violations.push({ from, to: target, reason: `${fromUnit} and ${toUnit} share layer ${fromLayer}: they must not import each other` });
    }
  }
  return violations;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const srcDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const violations = checkLayers(srcDir);
  for (const v of violations) console.error(`src/${v.from}${v.to ? ` → ${v.to}` : ''}: ${v.reason}`);
  if (violations.length > 0) {
    console.error(`${violations.length} import(s) break the layering (scripts/check-layers.ts)`);
    process.exit(1);
  }
  console.log('layers: every import points down');
}
