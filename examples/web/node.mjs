// Runs the example in Node: the sweep (every result checked, every bucket settled),
// the learned tables, and with --figures the Scalar vs SIMD128 figures as JSON.
// Usage: node examples/web/node.mjs [--figures]   (after scripts/test-wasm built pkg/)
import { readFileSync } from 'node:fs';
import { initSync, sweep, tables, figures, simd_level } from './pkg/adaptive_kernel_web.js';

initSync({ module: readFileSync(new URL('./pkg/adaptive_kernel_web_bg.wasm', import.meta.url)) });
const report = JSON.parse(sweep(40));
console.log(`SIMD level: ${simd_level()}`);
console.log(tables());
console.log(`results: ${report.results_ok ? 'all right' : 'WRONG'}; settled: ${report.settled} of ${report.buckets} buckets; backends chosen: ${report.backends_used.join(', ')}`);
if (process.argv.includes('--figures')) {
  console.log(figures());
}
const ok = report.results_ok && report.settled === report.buckets
  && !report.backends_used.includes('gpu') && !report.backends_used.includes('parallel');
process.exit(ok ? 0 : 1);
