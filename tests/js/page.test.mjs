// The demo page (examples/web) in headless Chromium on its own WebGPU
// adapter (SwiftShader here): served from the build folder on 127.0.0.1,
// screenshot saved as <build>/web/demo.png, and what it shows checked: an
// adapter name, every result row "correct", no error text. A browser
// without an adapter fails this test.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { webDir } from './harness.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = process.env.WT_CHROMIUM || '/usr/bin/chromium';

function serve(dir) {
  return new Promise((resolve, reject) => {
    const server = spawn('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '0'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    server.stdout.on('data', (d) => {
      text += d;
      const m = text.match(/port (\d+)/);
      if (m) resolve({ server, port: Number(m[1]) });
    });
    server.on('error', reject);
    server.on('exit', (code) => reject(new Error(`http.server exited (${code}): ${text}`)));
  });
}

// Runs in the page: every elementwise op of tests/ew_refs.def (its text)
// against its float64 reference, on WebGPU.
async function browserBattery(refsText) {
  const wt = await import('./webtensor.mjs');
  const R = await import('./references.mjs');
  const { OPS } = await import('./webtensor_ops.mjs');
  const { UNARY, BINARY } = R.referencesFrom(refsText);
  const ctx = await wt.init({ backend: 'webgpu' });
  const fails = [];
  let checked = 0;
  const check = async (name, t, want) => {
    const r = R.closeness(await t.read(), want, 1.2e-5, 1e-6);
    t.dispose();
    checked++;
    if (!(r.worst <= 0)) fails.push({ name, at: r.at, got: r.g, want: r.w });
  };
  for (const [name, ref] of Object.entries(UNARY)) {
    const x = R.inputs(37, 11, ref.lo, ref.hi, ref.bool);
    const nparams = OPS.find((s) => s.name === name).params.filter((p) => p.kind === 'd').length;
    const params = (ref.params || []).slice(0, nparams);
    const tx = await ctx.tensor(x);
    await check(name, await ctx[name](tx, ...params), Array.from(x, (v) => ref.f(v)));
    tx.dispose();
  }
  for (const [name, ref] of Object.entries(BINARY)) {
    const a = R.inputs(20, 21, ref.lo, ref.hi, ref.bool);
    const b = R.inputs(20, 22, ref.lo2, ref.hi2, ref.bool);
    const ta = await ctx.tensor(a);
    const tb = await ctx.tensor(b);
    await check(name, await ctx[name](ta, tb), Array.from(a, (v, i) => ref.f(v, b[i])));
    for (const t of [ta, tb]) t.dispose();
  }
  const contract = {};
  const m = await ctx.tensor(new Float32Array(6), [2, 3]);
  try {
    await ctx.matmul(m, m);
    contract.error = 'none';
  } catch (e) {
    contract.error = `${e.constructor.name} ${e.status}`;
  }
  m.dispose();
  contract.liveTensors = (await ctx.memoryStats()).liveTensors;
  ctx.destroy();
  return { checked, fails, contract };
}

async function runPage(puppeteer, port, args, timeoutMs) {
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args });
  const lines = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 900 });
    const finished = new Promise((resolve) => {
      page.on('console', (m) => {
        lines.push(m.text());
        if (/^webtensor demo: (done|failed)/.test(m.text())) resolve(m.text());
      });
      page.on('pageerror', (e) => { lines.push(`pageerror: ${e.message}`); resolve(`failed: ${e.message}`); });
    });
    await page.goto(`http://127.0.0.1:${port}/index.html`);
    let timer;
    const last = await Promise.race([finished,
      new Promise((resolve) => { timer = setTimeout(() => resolve('timed out'), timeoutMs); })]);
    clearTimeout(timer);
    const shown = await page.evaluate(() => ({
      adapter: document.getElementById('adapter').innerText,
      results: [...document.querySelectorAll('#results tr')].slice(1).map((r) => r.innerText),
      body: document.body.innerText,
    }));
    return { page, browser, last, shown, lines };
  } catch (e) {
    await browser.close();
    throw e;
  }
}

it('the demo page runs on the browser\'s WebGPU and shows correct results', { timeout: 240000 }, async () => {
  const puppeteer = createRequire(join(root, 'tests', 'web', 'package.json'))('puppeteer-core');
  const { server, port } = await serve(webDir);
  try {
    // Without --enable-unsafe-webgpu Chromium has no adapter: the page
    // must say so, not pass on the CPU alone.
    const off = await runPage(puppeteer, port, ['--no-sandbox'], 60000);
    await off.browser.close();
    assert.match(off.last, /^webtensor demo: failed: WT_ERR_NO_DEVICE: ./, off.lines.join('\n'));
    assert.match(off.shown.body, /Error: WT_ERR_NO_DEVICE/);

    const { page, browser, last, shown, lines } =
      await runPage(puppeteer, port, ['--no-sandbox', '--enable-unsafe-webgpu'], 200000);
    await page.screenshot({ path: join(webDir, 'demo.png'), fullPage: true });
    // The elementwise ops against the float64 references of the Node
    // suite, and the API's error and memory contract, on the same page.
    copyFileSync(new URL('./references.mjs', import.meta.url), join(webDir, 'references.mjs'));
    const refsText = readFileSync(join(root, 'tests', 'ew_refs.def'), 'utf8');
    const battery = await page.evaluate(browserBattery, refsText).finally(() => browser.close());
    assert.deepEqual(battery.fails, [], JSON.stringify(battery.fails, null, 1));
    assert.ok(battery.checked >= 50, `${battery.checked} ops checked`);
    assert.deepEqual(battery.contract, { error: 'WebtensorError WT_ERR_SHAPE', liveTensors: 0 });
    assert.equal(last, 'webtensor demo: done', lines.join('\n'));
    assert.match(shown.adapter, /adapter\s+\S+/, 'the adapter has a name');
    assert.doesNotMatch(shown.adapter, /adapter\s+\(not given\)/);
    assert.equal(shown.results.length, 2, shown.body);
    assert.match(shown.results[0], /^webgpu/);
    for (const r of shown.results) assert.match(r, /correct/);
    assert.doesNotMatch(shown.body, /Error|WRONG|device lost/);
  } finally {
    server.kill();
  }
});
