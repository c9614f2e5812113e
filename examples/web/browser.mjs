// Loads the example page in headless Chromium through chromedriver (W3C WebDriver
// over Node's fetch: no npm packages) and checks it: the status line says PASS and
// the browser logged no error. Prints the page's text (and its figures with
// --figures). Serves the folder itself, cross-origin isolated (COOP/COEP), which
// gives performance.now() 5 µs resolution instead of 100 µs.
// Usage: node examples/web/browser.mjs [--figures]   (after scripts/test-wasm built pkg/)
import { createServer } from 'node:http';
import { readFile, mkdtemp } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, extname } from 'node:path';

const root = new URL('.', import.meta.url).pathname;
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const chromedriver = process.env.CHROMEDRIVER ?? '/usr/bin/chromedriver';
const figures = process.argv.includes('--figures');
const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm' };

const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname.replace(/\/$/, '/index.html');
  try {
    const body = await readFile(join(root, path));
    res.writeHead(200, {
      'Content-Type': types[extname(path)] ?? 'application/octet-stream',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
    });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const page = `http://127.0.0.1:${server.address().port}/index.html${figures ? '?figures' : ''}`;

const port = 9515 + Math.floor(Math.random() * 1000);
const driver = spawn(chromedriver, [`--port=${port}`], { stdio: 'ignore' });
const base = `http://127.0.0.1:${port}`;
async function call(method, path, body) {
  const res = await fetch(base + path, { method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json.value)}`);
  return json.value;
}
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

let code = 1;
let session;
try {
  for (let i = 0; ; i++) {
    try { await call('GET', '/status'); break; } catch (e) { if (i > 100) throw e; await sleep(100); }
  }
  const profile = await mkdtemp(join(tmpdir(), 'ak-chromium-'));
  session = (await call('POST', '/session', {
    capabilities: {
      alwaysMatch: {
        browserName: 'chrome',
        'goog:chromeOptions': {
          binary: chromium,
          args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync',
            `--user-data-dir=${profile}`],
        },
        'goog:loggingPrefs': { browser: 'ALL' },
      },
    },
  })).sessionId;
  const version = (await call('POST', `/session/${session}/execute/sync`, { script: 'return navigator.userAgent', args: [] }));
  await call('POST', `/session/${session}/url`, { url: page });
  let status = 'running…';
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    status = await call('POST', `/session/${session}/execute/sync`, { script: "return document.getElementById('status').textContent", args: [] });
    if (status === 'PASS' || status === 'FAIL') break;
    await sleep(250);
  }
  const text = await call('POST', `/session/${session}/execute/sync`, { script: 'return document.body.innerText', args: [] });
  const logs = await call('POST', `/session/${session}/se/log`, { type: 'browser' });
  const severe = logs.filter((l) => l.level === 'SEVERE');
  console.log(`${version}\n${text}`);
  if (figures) {
    console.log(await call('POST', `/session/${session}/execute/sync`, { script: "return document.getElementById('figures').textContent", args: [] }));
  }
  for (const l of severe) console.log(`console error: ${l.message}`);
  if (status !== 'PASS') console.log(`the page did not pass: status ${status}`);
  code = status === 'PASS' && severe.length === 0 ? 0 : 1;
} catch (e) {
  console.error(`browser check failed: ${e.message}`);
} finally {
  if (session) await call('DELETE', `/session/${session}`).catch(() => {});
  driver.kill();
  server.close();
}
process.exit(code);
