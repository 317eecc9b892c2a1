// Runs check_profile.mjs (or check_svg.mjs, given --svg) where its tools are present; otherwise prints why and exits 77
// (ctest: skipped), or 1 when NVSCOPE_REQUIRE_BROWSER=1 (CI installs them, so there a missing
// tool is a failure, not a skip).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : ''; };

const svg = arg('svg') !== '';

function missing() {
  const chromium = arg('chromium');
  if (!chromium || chromium.endsWith('-NOTFOUND') || !fs.existsSync(chromium))
    return 'Chromium not found (Debian: apt-get install chromium)';
  if ((!svg && !fs.existsSync(path.join(arg('speedscope'), 'index.html'))) ||
      !fs.existsSync(path.join(here, 'node_modules', 'playwright-core')))
    return 'speedscope or playwright-core not installed (npm ci --prefix tests/browser)';
  return null;
}

const why = missing();
if (why) {
  console.log(`skipped: ${why}`);
  process.exit(process.env.NVSCOPE_REQUIRE_BROWSER === '1' ? 1 : 77);
}
await import(pathToFileURL(path.join(here, svg ? 'check_svg.mjs' : 'check_profile.mjs')).href);
