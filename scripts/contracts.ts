// The published contracts (docs/api.md#changing-a-published-contract): what the gateway serves on the
// default settings, committed to schemas/published/, and the last release's copy in
// schemas/published/released/, the baseline no change may break without a declaration in docs/changelog.md.
//   node scripts/contracts.ts write            write schemas/published/ from what the gateway serves (part of `npm run gen`)
//   node scripts/contracts.ts check            fail when it is stale or a change since the last release breaks a reader (npm test)
//   node scripts/contracts.ts release [name]   promote today's contracts to the last release (name: today's date, UTC)
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  baselineProblem,
  checkContracts,
  formatReport,
  HOW_TO,
  promoteUnreleased,
  PUBLISHED_DIR,
  readDocSet,
  releaseDigest,
  RELEASED_DIR,
  staleFiles,
  writeDocSet,
} from '@ingest/contracts';
import { defaultDocs, servedContracts } from '@ingest/gateway';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHANGELOG = join(REPO_ROOT, 'docs', 'changelog.md');
const [command = 'check', name] = process.argv.slice(2);
const served = servedContracts(defaultDocs());
const shown = (dir: string) => dir.slice(REPO_ROOT.length + 1);

switch (command) {
  case 'write': {
    const changed = writeDocSet(PUBLISHED_DIR, served);
    console.log(
      changed.length ? `wrote ${changed.map((f) => `${shown(PUBLISHED_DIR)}/${f}`).join(', ')}` : `${shown(PUBLISHED_DIR)} is up to date`,
    );
    break;
  }
  case 'check': {
    const fresh = reportStale();
    const [released, changelog] = [readDocSet(RELEASED_DIR), readFileSync(CHANGELOG, 'utf8')];
    const baseline = baselineProblem(released, changelog);
    if (baseline) {
      console.error(baseline);
      process.exit(1);
    }
    const result = checkContracts(released, served, changelog);
    const report = formatReport(result);
    if (report) console.error(report);
    if (!fresh || result.breaking.length) process.exit(1);
    console.log(`contracts: ${served.size} served documents, fresh and compatible with the last release`);
    break;
  }
  case 'release': {
    if (!reportStale()) process.exit(1);
    const changelog = readFileSync(CHANGELOG, 'utf8');
    const released = readDocSet(RELEASED_DIR);
    // Only the very first release has no baseline to start from.
    const baseline = released.size ? baselineProblem(released, changelog) : null;
    if (baseline) {
      console.error(baseline);
      process.exit(1);
    }
    const result = checkContracts(released, served, changelog);
    if (result.breaking.length) {
      console.error(`${formatReport(result)}\n\nNot released: a release cannot carry a breaking change the changelog does not declare.`);
      process.exit(1);
    }
    const { changed, missing, extra } = staleFiles(RELEASED_DIR, served);
    if (!changed.length && !missing.length && !extra.length) {
      console.log('nothing to release: the contracts are those of the last release');
      break;
    }
    const label = name ?? new Date().toISOString().slice(0, 10);
    writeFileSync(CHANGELOG, promoteUnreleased(changelog, label, releaseDigest(served)));
    rmSync(RELEASED_DIR, { recursive: true, force: true });
    writeDocSet(RELEASED_DIR, served);
    console.log(
      `released ${label}: ${shown(RELEASED_DIR)} is now today's contracts (${[...changed, ...missing, ...extra].length} files changed) and docs/changelog.md lists the release; commit both`,
    );
    break;
  }
  default:
    console.error(`usage: npm run contracts -- [check | write | release [name]] (${HOW_TO})`);
    process.exit(2);
}

/** Whether schemas/published/ is what the gateway serves; names each file that is not. */
function reportStale(): boolean {
  const { changed, missing, extra } = staleFiles(PUBLISHED_DIR, served);
  const lines = [
    ...changed.map((f) => `stale: ${shown(PUBLISHED_DIR)}/${f} differs from what the gateway serves`),
    ...missing.map((f) => `missing: ${shown(PUBLISHED_DIR)}/${f} is served but not committed`),
    ...extra.map((f) => `extra: ${shown(PUBLISHED_DIR)}/${f} is no longer served`),
  ];
  if (lines.length) console.error(`${lines.join('\n')}\n(run: npm run gen, then review and commit schemas/published/)\n`);
  return lines.length === 0;
}
