// Opens one of nvscope's outputs in speedscope, in headless Chromium, and checks from the page
// that the profile loaded with the expected frames and totals.
//
//   node check_profile.mjs --chromium /usr/bin/chromium --speedscope <speedscope/dist/release>
//        --profile <file> --format folded|chrome --screenshot <out.png> [--expect-from <file>]
//
// --expect-from computes the expectation from another file than the one opened (the check's
// own test: a file with one figure changed must fail).
// --frames name=count[,name=count]: the page shows exactly `count` frames of that event name
// (`name` or `name {args}`) over all profiles: events that speedscope should merge (two launches
// of one kernel in one range) are one frame, not one per event.
// What is expected is computed from the file itself, independently of speedscope:
//   folded  one profile; a frame's total is the sum of the weights of the stacks that hold
//           it, its self the sum of those where it is the leaf (exact integers on the page)
//   chrome  one profile per (pid, tid) with "X" events; speedscope names a frame
//           `name {args as JSON}`; a frame's total is the sum of its events' durations
//           (the page shows two decimals of ns, µs, ms or s)
// Each profile speedscope offers (key `n` steps to the next) is read from the sandwich view's
// table and matched to the expected profile with the same frame names. Every expected profile
// must be found, with every total. Screenshots: <out>-<k>.png, one per profile, for CI.
// Exit status: 0 when all matches, 1 otherwise (each difference listed), 2 on bad arguments.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function parseArgs(argv) {
  const a = {};
  for (let i = 2; i + 1 < argv.length; i += 2) a[argv[i].replace(/^--/, '')] = argv[i + 1];
  a['expect-from'] ??= a.profile;
  for (const k of ['chromium', 'speedscope', 'profile', 'format', 'screenshot']) {
    if (!a[k]) { console.error(`check_profile: --${k} missing`); process.exit(2); }
  }
  return a;
}

function expectFolded(text) {
  const frames = new Map();
  for (const line of text.split('\n')) {
    const m = line.match(/^(.*) (\d+)$/);
    if (!m) continue;
    const stack = m[1].split(';');
    const weight = Number(m[2]);
    for (const f of new Set(stack)) {
      const e = frames.get(f) ?? { total: 0, self: 0 };
      e.total += weight;
      frames.set(f, e);
    }
    frames.get(stack[stack.length - 1]).self += weight;
  }
  return [{ name: 'folded stacks', unit: 'none', frames }];
}

function expectChrome(text) {
  const json = JSON.parse(text);
  const events = Array.isArray(json) ? json : json.traceEvents;
  const groups = new Map();
  for (const e of events) {
    if (e.ph !== 'X') continue;
    const key = `${e.pid}:${e.tid}`;
    if (!groups.has(key)) groups.set(key, { name: `pid ${e.pid} tid ${e.tid}`, unit: 'us', frames: new Map() });
    const args = e.args && Object.keys(e.args).length ? ' ' + JSON.stringify(e.args) : '';
    const frame = e.name + args;
    const f = groups.get(key).frames.get(frame) ?? { total: 0 };
    f.total += e.dur ?? 0;
    groups.get(key).frames.set(frame, f);
  }
  return [...groups.values()];
}

// "1,234 (5%)" -> 1234; "20.00µs (50%)" -> { value: 20, ns: 1000 }
const UNIT_NS = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9 };
function readValue(cell) {
  const m = cell.trim().match(/^([\d,.]+)\s*(ns|µs|us|ms|s|min)?/);
  if (!m) return null;
  return { value: Number(m[1].replace(/,/g, '')), unit: m[2] ?? '' };
}

function sameValue(shown, expected, unit) {
  if (!shown) return false;
  if (unit === 'none') return shown.unit === '' && shown.value === expected;
  const perUnit = UNIT_NS[shown.unit];
  if (perUnit === undefined) return false;
  const expectedNs = expected * 1e3;
  return Math.abs(shown.value * perUnit - expectedNs) <= 0.0051 * perUnit + 1e-9 * expectedNs;
}

async function readTable(page) {
  const text = await page.evaluate(() => document.body.innerText);
  const lines = text.split('\n').map((l) => l.replace(/^\t/, ''));
  const header = lines.findIndex((l) => /Total\s+Self\s+Symbol Name/.test(l));
  if (header < 0) return { rows: null, counter: null };
  const rows = [];
  for (let i = header + 1; i + 2 < lines.length; i += 3) {
    rows.push({ total: readValue(lines[i]), self: readValue(lines[i + 1]), name: lines[i + 2] });
  }
  const counter = text.match(/\((\d+)\/(\d+)\)/);
  return { rows, counter: counter ? [Number(counter[1]), Number(counter[2])] : [1, 1] };
}

function compare(expected, rows) {
  const problems = [];
  const shown = new Map(rows.map((r) => [r.name, r]));
  for (const [name, e] of expected.frames) {
    const r = shown.get(name);
    if (!r) { problems.push(`frame ${JSON.stringify(name)} not shown`); continue; }
    if (!sameValue(r.total, e.total, expected.unit))
      problems.push(`frame ${JSON.stringify(name)}: total shown ${JSON.stringify(r.total)}, expected ${e.total}`);
    if (e.self !== undefined && !sameValue(r.self, e.self, expected.unit))
      problems.push(`frame ${JSON.stringify(name)}: self shown ${JSON.stringify(r.self)}, expected ${e.self}`);
  }
  for (const r of rows) if (!expected.frames.has(r.name)) problems.push(`unexpected frame ${JSON.stringify(r.name)}`);
  return problems;
}

function serve(dist, profile) {
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url.split(/[?#]/)[0]);
    const file = url === '/profile' ? profile : path.join(dist, path.normalize(url === '/' ? '/index.html' : url));
    fs.readFile(file, (err, data) => {
      res.writeHead(err ? 404 : 200);
      res.end(err ? '' : data);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  const a = parseArgs(process.argv);
  const text = fs.readFileSync(a['expect-from'], 'utf8');
  const expected = a.format === 'folded' ? expectFolded(text) : expectChrome(text);
  const frames = expected.reduce((n, g) => n + g.frames.size, 0);
  if (frames === 0) { console.log(`check_profile: ${a.profile} holds no frame: nothing to check`); return 1; }
  const started = Date.now();
  const server = await serve(a.speedscope, path.resolve(a.profile));
  const base = `http://127.0.0.1:${server.address().port}`;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nvscope-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: a.chromium, headless: true, args: FLAGS, viewport: { width: 1280, height: 2400 } });
  const problems = [];
  try {
    const page = context.pages()[0] ?? await context.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    const title = path.basename(a.profile);
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + '/profile')}&title=${encodeURIComponent(title)}&view=sandwich`);
    await page.waitForFunction(() => /Symbol Name/.test(document.body.innerText), null, { timeout: 30000 });
    const tables = [];
    let { rows, counter } = await readTable(page);
    for (let k = 1; ; ++k) {
      await page.screenshot({ path: a.screenshot.replace(/\.png$/, `-${k}.png`) });
      tables.push(rows);
      if (k >= counter[1] || k >= 16) break;
      await page.keyboard.press('n');
      await page.waitForFunction((want) => document.body.innerText.includes(`(${want}/`), k + 1, { timeout: 10000 });
      ({ rows, counter } = await readTable(page));
    }
    for (const [, name, count] of (a.frames ?? '').matchAll(/(.+?)=(\d+)(?:,|$)/g)) {
      const want = Number(count);
      const shown = tables.flat().filter((r) => r && (r.name === name || r.name.startsWith(`${name} {`))).length;
      if (shown !== want) problems.push(`${shown} frames named ${JSON.stringify(name)} shown, expected ${want}`);
    }
    for (const e of expected) {
      const names = [...e.frames.keys()].sort().join('\n');
      const match = tables.findIndex((t) => t && t.map((r) => r.name).sort().join('\n') === names);
      if (match < 0) {
        const close = tables.map((t) => compare(e, t ?? [])).sort((x, y) => x.length - y.length)[0];
        problems.push(`${e.name}: no profile on the page has its ${e.frames.size} frames; nearest: ${close.slice(0, 5).join('; ')}`);
        continue;
      }
      const diff = compare(e, tables[match]);
      problems.push(...diff.map((d) => `${e.name}: ${d}`));
      if (!diff.length) console.log(`${e.name}: profile ${match + 1}/${tables.length}, ${e.frames.size} frames, every total as expected`);
    }
  } finally {
    await context.close();
    server.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  for (const p of problems) console.log(`check_profile: ${p}`);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (problems.length) { console.log(`check_profile: ${a.profile}: ${problems.length} problems (${seconds} s)`); return 1; }
  console.log(`check_profile ok: ${path.basename(a.profile)} in speedscope: ${expected.length} profiles, ${frames} frames (${seconds} s)`);
  return 0;
}

process.exitCode = await main();
