// Opens one of nvscope's own pictures (export/flame_svg.hpp, export/charts_svg.hpp) in headless
// Chromium and checks from the page that it drew what it should and that a click zooms.
//
//   node check_svg.mjs --chromium /usr/bin/chromium --svg <file> --kind flame|steps|kernels
//        --screenshot <out.png> [--folded <file>] [--bars N] [--plots N]
//
//   flame    --folded: the stacks the picture was made from. Expected from them, independently
//            of the picture's code: one frame per distinct stack prefix plus the root, each
//            frame's width its share of the total; hovering a frame names it; a click on the
//            widest frame narrower than the root widens it to the full width; searching the leaf of
//            the first stack covers the share of the stacks that hold it.
//   steps    --bars: the bars drawn (two a step), --plots: the plots; a utilisation line.
//   kernels  --plots: one histogram per top kernel, each with at least one bar.
//   steps and kernels: a click on the first plot scales its x axis 4 times.
// Screenshots: <out>-before.png and <out>-after.png (after the click). Exit status 0 when all
// holds, 1 otherwise (each problem listed), 2 on bad arguments.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

function parseArgs(argv) {
  const a = {};
  for (let i = 2; i + 1 < argv.length; i += 2) a[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['chromium', 'svg', 'kind', 'screenshot']) {
    if (!a[k]) { console.error(`check_svg: --${k} missing`); process.exit(2); }
  }
  return a;
}

// Frames of a flame graph made from folded text: every distinct prefix, with its weight.
function expectedFrames(text) {
  const frames = new Map([['', 0]]);
  for (const line of text.split('\n')) {
    const m = line.match(/^(.*) (\d+)$/);
    if (!m) continue;
    const weight = Number(m[2]);
    frames.set('', frames.get('') + weight);
    let prefix = '';
    for (const f of m[1].split(';')) {
      prefix += `;${f}`;
      frames.set(prefix, (frames.get(prefix) ?? 0) + weight);
    }
  }
  return frames;
}

async function checkFlame(page, a, problems) {
  const frames = expectedFrames(fs.readFileSync(a.folded, 'utf8'));
  const total = frames.get('');
  const shown = await page.evaluate(() => [...document.querySelectorAll('.frame')].map((g) => ({
    name: g.getAttribute('data-name'), w: +g.getAttribute('data-w'), depth: +g.getAttribute('data-depth'),
    width: +g.querySelector('rect').getAttribute('width') })));
  if (shown.length !== frames.size) problems.push(`${shown.length} frames drawn, expected ${frames.size}`);
  const widths = [...frames.entries()].filter(([k]) => k).map(([, w]) => w).sort((x, y) => x - y);
  const drawn = shown.filter((f) => f.depth > 0).map((f) => f.w).sort((x, y) => x - y);
  if (JSON.stringify(widths) !== JSON.stringify(drawn)) problems.push(`frame weights ${drawn} differ from the stacks' ${widths}`);
  if (shown[0]?.w !== total) problems.push(`root weighs ${shown[0]?.w}, expected ${total}`);
  const full = shown[0]?.width ?? 0;
  const target = shown.filter((f) => f.depth > 0 && f.width < full * 0.99).sort((x, y) => y.w - x.w)[0] ?? shown[1];
  const index = shown.indexOf(target);
  const frame = page.locator('.frame').nth(index);
  await frame.hover();
  const details = await page.evaluate(() => document.getElementById('details').textContent);
  if (!details.startsWith(target.name)) problems.push(`hover shows ${JSON.stringify(details)}, not the frame's name ${JSON.stringify(target.name)}`);
  await frame.click();
  const after = await page.evaluate((i) => +document.querySelectorAll('.frame')[i].querySelector('rect').getAttribute('width'), index);
  if (!(target.width < full * 0.99 && Math.abs(after - full) < 1)) problems.push(`click: frame width ${target.width} -> ${after}, expected the full ${full}`);
  const leaf = fs.readFileSync(a.folded, 'utf8').split('\n')[0].replace(/ \d+$/, '').split(';').pop();
  let holding = 0;
  for (const line of fs.readFileSync(a.folded, 'utf8').split('\n')) {
    const m = line.match(/^(.*) (\d+)$/);
    if (m && m[1].split(';').includes(leaf)) holding += Number(m[2]);
  }
  const escaped = leaf.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const share = await page.evaluate((re) => window.nvscopeFlame.search(`^${re}$`), escaped);
  if (Math.abs(share - holding / total) > 1e-9) problems.push(`search ${leaf}: ${share} matched, expected ${holding / total}`);
}

async function checkChart(page, a, problems) {
  const counts = await page.evaluate(() => ({ bars: document.querySelectorAll('rect.bar').length,
    plots: document.querySelectorAll('.plot').length, line: document.querySelectorAll('path.utilisation').length,
    empty: [...document.querySelectorAll('.plot')].filter((p) => !p.querySelector('rect.bar, path.utilisation')).length }));
  if (a.bars && counts.bars !== Number(a.bars)) problems.push(`${counts.bars} bars drawn, expected ${a.bars}`);
  if (a.plots && counts.plots !== Number(a.plots)) problems.push(`${counts.plots} plots drawn, expected ${a.plots}`);
  if (a.kind === 'steps' && counts.line !== 1) problems.push(`${counts.line} utilisation lines, expected 1`);
  if (counts.empty) problems.push(`${counts.empty} plots hold nothing`);
  const plot = page.locator('.plot').first();
  const box = await plot.boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  const transform = await page.evaluate(() => document.querySelector('.plot .zoom').getAttribute('transform') ?? '');
  if (!/scale\(4,1\)/.test(transform)) problems.push(`click on the plot: transform ${JSON.stringify(transform)}, expected scale(4,1)`);
  const caption = await page.evaluate(() => document.querySelector('.plot .caption').textContent);
  if (!/^zoom x4: /.test(caption)) problems.push(`caption after the click: ${JSON.stringify(caption)}`);
}

async function main() {
  const a = parseArgs(process.argv);
  if (a.kind === 'flame' && !a.folded) { console.error('check_svg: flame needs --folded'); return 2; }
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nvscope-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: a.chromium, headless: true, args: FLAGS, viewport: { width: 1280, height: 1100 } });
  const problems = [];
  try {
    const page = context.pages()[0] ?? await context.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.goto(pathToFileURL(path.resolve(a.svg)).href);
    const root = await page.evaluate(() => document.documentElement.localName);
    if (root !== 'svg') throw new Error(`the file did not open as SVG (root element ${root}): not well-formed XML?`);
    await page.screenshot({ path: a.screenshot.replace(/\.png$/, '-before.png') });
    await (a.kind === 'flame' ? checkFlame : checkChart)(page, a, problems);
    await page.screenshot({ path: a.screenshot.replace(/\.png$/, '-after.png') });
  } catch (e) {
    problems.push(e.message);
  } finally {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  for (const p of problems) console.log(`check_svg: ${p}`);
  if (problems.length) { console.log(`check_svg: ${a.svg}: ${problems.length} problems`); return 1; }
  console.log(`check_svg ok: ${path.basename(a.svg)} (${a.kind}) drawn, hover/click/search as expected`);
  return 0;
}

process.exitCode = await main();
