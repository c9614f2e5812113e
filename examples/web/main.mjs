// The page's script: runs the sweep, shows the learned tables, keeps them in
// localStorage, and shows what a trap means and how to carry on after one.
// The status line ends in PASS or FAIL (scripts/test-wasm reads it).
import init, * as ak from './pkg/adaptive_kernel_web.js';

const STORE = 'adaptive-kernel-tables';
const errors = [];
const show = (id, text) => { document.getElementById(id).textContent = text; };
const fail = (what) => { errors.push(what); show('errors', `errors: ${errors.join('; ')}`); };
window.addEventListener('error', (e) => fail(String(e.message)));
window.addEventListener('unhandledrejection', (e) => fail(String(e.reason)));
const consoleError = console.error;
console.error = (...args) => { fail(args.join(' ')); consoleError(...args); };

function sweepRows(report) {
  const table = document.getElementById('sweep');
  for (const r of report.rows) {
    const row = table.insertRow();
    for (const cell of [r.kernel, r.size, r.chosen ?? '…', r.decided_by ?? '', r.scalar_us ?? '-', r.simd_us ?? '-', r.ok ? 'yes' : 'NO']) {
      row.insertCell().textContent = cell;
    }
  }
}

async function main() {
  await init();
  show('simd', `SIMD level: ${ak.simd_level()}`);
  const stored = localStorage.getItem(STORE);
  if (stored) {
    try { show('imported', `stored tables: ${ak.import_tables(stored)} kernels start from them`); }
    catch (e) { show('imported', `stored tables: not used (${e})`); localStorage.removeItem(STORE); }
  } else {
    show('imported', 'stored tables: none yet (first visit): learning from scratch');
  }

  const report = JSON.parse(ak.sweep(40));
  sweepRows(report);
  show('results', `results: ${report.results_ok ? 'all right' : 'WRONG'}`);
  show('settled', `settled: ${report.settled} of ${report.buckets} buckets`);
  show('backends', `backends chosen: ${report.backends_used.join(', ')}`);
  show('tables', ak.tables());
  const json = ak.export_tables();
  localStorage.setItem(STORE, json);
  show('saved', `saved: ${json.length} bytes of learned tables in localStorage`);

  // A panic on wasm32-unknown-unknown aborts: a trap. The instance must not be used
  // again; reset it (a fresh instance of the module) and import what it had learned.
  let trapped = false;
  try {
    ak.bad_input();
    show('trap', 'bad input: no trap (unexpected)');
  } catch (e) {
    trapped = e instanceof WebAssembly.RuntimeError;
    show('trap', `bad input: ${e.constructor.name} (${e.message}); panic: ${globalThis.akPanic ?? 'none reported'}`);
  }
  let recovered = false;
  if (trapped) {
    ak.__wbg_reset_state();
    const adopted = ak.import_tables(json);
    const again = JSON.parse(ak.sweep(3));
    recovered = again.results_ok && again.settled === again.buckets && adopted > 0;
    show('recovered', `after the trap: a fresh instance imported ${adopted} kernels' tables; results ${again.results_ok ? 'all right' : 'WRONG'}, ${again.settled} of ${again.buckets} buckets settled from the first calls`);
  }

  if (new URLSearchParams(location.search).has('figures')) {
    show('figures', ak.figures());
  }
  const ok = report.results_ok && report.settled === report.buckets && trapped && recovered
    && !report.backends_used.includes('gpu') && !report.backends_used.includes('parallel') && errors.length === 0;
  show('status', ok ? 'PASS' : 'FAIL');
}

main().catch((e) => { fail(String(e && e.stack || e)); show('status', 'FAIL'); });
