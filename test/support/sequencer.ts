// The order files start in (vitest.config.ts's `sequence.sequencer`; test/README.md, ADR 0375).
// Two workers take files off one queue, so the run lasts at least as long as the file started
// last: the longest files must start first. Vitest orders by the last run's durations from its
// results cache, but a fresh clone (CI) has none, and then it orders each lane by file size,
// lane after lane (e2e, integration, sandbox, unit): a 60-140 s file of a later lane started
// near the end and ran alone while the other worker idled.
//
// Here, across the lanes: the files of test/durations.json (the known-long ones, each with its
// seconds as measured on 2 cores) longest first, then every other isolated file (unknown: by
// the last run's duration when vitest has one, else by size), then the unit lane, whose files
// share workers (isolate: false) and so must stay together, at the end where its short files
// fill the gaps. Only the order changes: every file still runs.
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LIST = new URL('../durations.json', import.meta.url);

/** test/durations.json: path from the repository's root → seconds (a file's collect + tests + hooks). */
export function knownDurations(): Map<string, number> {
  const list = JSON.parse(readFileSync(LIST, 'utf8')) as { files: Record<string, number> };
  return new Map(Object.entries(list.files));
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = knownDurations();
    const root = this.ctx.config.root;
    const keyed = await Promise.all(
      files.map(async (spec) => {
        const path = relative(root, spec.moduleId).split('\\').join('/');
        const listed = known.get(path);
        const cached = this.ctx.cache.getTestSpecificationResult(spec);
        const size = await stat(spec.moduleId).then((s) => s.size, () => 0);
        return { spec, path, shared: spec.project.config.isolate === false, listed, cached, size };
      }),
    );
    // A file's rank: listed (by its seconds) before unlisted; unlisted by the cache's duration
    // (ms), else by size. Shared-worker files (the unit lane) last, in their own order.
    const rank = (f: (typeof keyed)[number]): [number, number] =>
      f.listed !== undefined ? [0, -f.listed] : f.cached ? [1, -f.cached.duration] : [2, -f.size];
    return keyed
      .sort((a, b) => {
        if (a.shared !== b.shared) return a.shared ? 1 : -1;
        if (a.shared && a.spec.project.name !== b.spec.project.name) return a.spec.project.name < b.spec.project.name ? -1 : 1;
        const [ga, va] = rank(a);
        const [gb, vb] = rank(b);
        return ga - gb || va - vb || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
      })
      .map((f) => f.spec);
  }
}
