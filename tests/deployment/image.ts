// The image the pods run: this checkout's build (`npm run image`), reused when it is current. The
// rendered manifests name registry.example.com/retail-ingestion; the harness's overlay points them
// here, as an operator's overlay points them at their registry.
import { ensureHostTools } from '../../scripts/image/hostTools.ts';
import { ensureServiceImage } from '../../scripts/image/service.ts';

export function ensureImage(say: (m: string) => void): string {
  ensureHostTools();
  const image = ensureServiceImage();
  say(`image ${image.ref}${image.buildSeconds === null ? ' (current build reused)' : ` (built in ${image.buildSeconds.toFixed(0)} s)`}`);
  return image.ref;
}
