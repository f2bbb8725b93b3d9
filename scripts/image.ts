// `npm run image`: the container image, built on this machine with podman (no Docker engine or image
// registry needed): the Node base image from Debian packages and the npm registry, built again only
// when its recipe changes, then the repository's Dockerfile on it, then checks inside the result.
//
//   npm run image                      base (cached), retail-ingestion:<git short sha> and :latest
//   npm run image -- --rebuild-base    make the base image again even if its recipe is unchanged
//
// docs/deploying.md "The image" shows a run.
import { ensureBaseImage } from './image/base.ts';
import { checkImage, DEV_ONLY } from './image/check.ts';
import { ensureHostTools } from './image/hostTools.ts';
import { imageSize, megabytes } from './image/podman.ts';
import { say } from './image/proc.ts';
import { buildServiceImage } from './image/service.ts';

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--rebuild-base');
if (unknown.length) {
  console.error(`unknown argument ${unknown.join(' ')}\nusage: npm run image [-- --rebuild-base]`);
  process.exit(2);
}

try {
  ensureHostTools();
  const base = ensureBaseImage({ rebuild: args.includes('--rebuild-base') });
  const image = buildServiceImage(base);
  say(`checking ${image.ref}: contents, development packages, operator CLIs`);
  const check = checkImage(image.ref);
  console.log(`base   ${base}  ${megabytes(imageSize(base))}`);
  console.log(`image  ${image.tags.join(', ')}  ${megabytes(image.bytes)}  (podman build ${image.buildSeconds?.toFixed(0)} s)`);
  console.log(`check  /app is the build context; ${check.packages} packages installed, none of ${DEV_ONLY.join(', ')}`);
  console.log(
    `       ran (read-only, uid 1000, no network): ${check.clis.map((c) => c.replace('services/operator/src/cli/', '')).join('; ')}`,
  );
  if (check.failures.length) console.log(`FAILED ${check.failures.length} check(s):`);
  for (const f of check.failures) console.log(`  - ${f}`);
  process.exitCode = check.failures.length ? 1 : 0;
} catch (err) {
  say(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
}
