// Runs test programs compiled to WebAssembly (tests/wasm) and fails unless
// every one ends with exit status 0 and "N passed, 0 failed".
//
//   node tests/web/run_suites.mjs node     BUILD_DIR prog:backend[:arg,arg...] ...
//   node tests/web/run_suites.mjs chromium BUILD_DIR prog:backend[:arg,arg...] ...
//
// A job "NAME=VALUE@prog:backend" runs with that environment variable (Node).
//
// node: each program in its own Node process, WebGPU from the npm "webgpu"
// package (Dawn; lavapipe here), see wasm_prelude.js.
// chromium: each program on a page (suite.html) of a local HTTP server on
// 127.0.0.1, in Debian's Chromium, headless, driven by puppeteer-core; the
// page prints the program's lines to the console and a last line
// "WT_EXIT <status>" that the driver waits for. A browser with no WebGPU
// adapter fails: the programs' context creation fails for "webgpu".
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [mode, buildDir, ...jobs] = process.argv.slice(2);
if (!['node', 'chromium'].includes(mode) || !buildDir || jobs.length === 0) {
  console.error('usage: run_suites.mjs node|chromium BUILD_DIR prog:backend ...');
  process.exit(2);
}
const progDir = path.resolve(buildDir, 'tests/wasm');
const timeoutMs = Number(process.env.WT_WASM_TEST_TIMEOUT || 600) * 1000;
const summaryRe = /: (\d+) passed, (\d+) failed\s*$/m;

function verdict(job, status, output, seconds) {
  const m = summaryRe.exec(output);
  const ok = status === 0 && m && Number(m[2]) === 0 && Number(m[1]) > 0;
  const summary = m ? `${m[1]} passed, ${m[2]} failed` : 'no summary line';
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${mode} ${job}: ${summary}, status ${status} (${seconds.toFixed(1)} s)`);
  if (!ok || process.env.WT_WASM_TEST_VERBOSE) {
    const lines = process.env.WT_WASM_TEST_VERBOSE ? [] : output.split('\n').filter((l) => /FAIL|rror|bort|xception/.test(l));
    console.log((lines.length ? lines : output.split('\n')).slice(-40).map((l) => '    ' + l).join('\n'));
  }
  return ok;
}

function runNode(prog, args, env) {
  return new Promise((resolve) => {
    const nodePath = [path.join(here, 'node_modules'), process.env.NODE_PATH].filter(Boolean).join(':');
    const child = spawn(process.execPath, [path.join(progDir, `${prog}.js`), ...args], {
      cwd: progDir, env: { ...process.env, ...env, NODE_PATH: nodePath } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => { out += '\ntimed out'; child.kill('SIGKILL'); }, timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ status: code ?? -1, output: out }); });
  });
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript',
                '.wasm': 'application/wasm' };
// Serves tests/web/suite.html and the programs, nothing else.
function serve() {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const name = path.basename(url.pathname);
    const file = name === 'suite.html' ? path.join(here, name) : path.join(progDir, name);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[path.extname(name)] || 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function runChromium(browser, port, prog, args) {
  const page = await browser.newPage();
  let out = '';
  let finish;
  const done = new Promise((resolve) => { finish = resolve; });
  page.on('console', (msg) => {
    const text = msg.text();
    const m = /^WT_EXIT (-?\d+)$/.exec(text);
    if (m) finish(Number(m[1]));
    else out += text + '\n';
  });
  page.on('pageerror', (err) => { out += `page error: ${err.message}\n`; finish(-1); });
  const timer = setTimeout(() => { out += 'timed out\n'; finish(-1); }, timeoutMs);
  const query = new URLSearchParams([['prog', prog], ...args.map((a) => ['arg', a])]);
  await page.goto(`http://127.0.0.1:${port}/suite.html?${query}`);
  const status = await done;
  clearTimeout(timer);
  await page.close();
  return { status, output: out };
}

let failed = 0;
const t0 = Date.now();
let browser = null, server = null;
if (mode === 'chromium') {
  const { default: puppeteer } = await import('puppeteer-core');
  server = await serve();
  browser = await puppeteer.launch({
    executablePath: process.env.WT_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless=new', '--no-sandbox', '--enable-unsafe-webgpu'],
  });
}
try {
  for (const job of jobs) {
    const at = job.indexOf('@');
    const env = {};
    if (at > 0) {
      const setting = job.slice(0, at), eq = setting.indexOf('=');
      env[setting.slice(0, eq)] = setting.slice(eq + 1);
    }
    const [prog, backend, extra] = job.slice(at + 1).split(':');
    const args = [backend, ...(extra ? extra.split(',') : [])];
    const start = Date.now();
    const r = mode === 'node' ? await runNode(prog, args, env)
                              : await runChromium(browser, server.address().port, prog, args);
    if (!verdict(job.length > 60 ? job.slice(0, 57) + '...' : job, r.status, r.output, (Date.now() - start) / 1000)) failed++;
  }
} finally {
  if (browser) await browser.close();
  if (server) server.close();
}
console.log(`wasm ${mode}: ${jobs.length - failed} of ${jobs.length} programs passed (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
process.exit(failed ? 1 : 0);
