// Builds the partial plotly.js bundle the site ships: plotly.js's core with only the trace types sitegen's
// charts use (sitegen/site/pages/charts.py), as plotly.js's CUSTOM_BUNDLE.md describes (lib/core +
// Plotly.register), bundled by esbuild with the options of plotly.js's own esbuild-config.js.
// Writes templates/assets/plotly.min.js and templates/assets/plotly.LICENSE.txt. See README.md.
import * as esbuild from 'esbuild';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Keep in step with the trace types of sitegen/site/pages/charts.py (tests/test_plotly_bundle.py checks both).
const TRACES = ['scatter', 'bar'];

const here = path.dirname(fileURLToPath(import.meta.url));
const assets = path.resolve(here, '..', '..', 'templates', 'assets');
const plotlyPackage = JSON.parse(readFileSync(path.join(here, 'node_modules', 'plotly.js', 'package.json'), 'utf8'));
const version = plotlyPackage.version;

const entry = [
  "'use strict';",
  "var Plotly = require('plotly.js/lib/core');",
  `Plotly.register([${TRACES.map((t) => `require('plotly.js/lib/${t}')`).join(', ')}]);`,
  'module.exports = Plotly;',
  '',
].join('\n');

// The first line asks V8 (Chrome 136 and later) to compile every function while the file streams in,
// off the main thread, instead of each on its first call: plotly.js calls most of its code when it loads
// and draws, and compiling it lazily was most of the main thread's time in both.
const banner = [
  '//# allFunctionsCalledOnLoad',
  `/*! plotly.js (sitegen partial: ${TRACES.join(', ')} - minified) v${version}`,
  ' * Copyright Plotly, Inc. and the authors of the bundled packages; MIT licence and theirs: the',
  ' * .LICENSE.txt file of the same name beside this file. Built by sitegen tools/plotly-bundle. */',
].join('\n');

const result = await esbuild.build({
  stdin: { contents: entry, resolveDir: here, sourcefile: 'sitegen-plotly-entry.js' },
  absWorkingDir: here,
  outfile: 'plotly.min.js',
  write: false,
  metafile: true,
  format: 'iife',
  globalName: 'Plotly',
  bundle: true,
  minify: true,
  sourcemap: false,
  target: 'es2016',
  define: { global: 'window', 'define.amd': 'false' },
  // Only the map subplot imports a stylesheet (maplibre's), and no map trace is bundled; plotly.js's own
  // build would inline it into a <style> element at run time, which the site's CSP does not allow.
  loader: { '.css': 'empty' },
  banner: { js: banner },
  logLevel: 'warning',
});

const [bundle] = result.outputFiles.filter((file) => file.path.endsWith('.js'));
const registered = [...bundle.text.matchAll(/moduleType:"trace",name:"([a-z0-9]+)"/g)].map((m) => m[1]).sort();
if (registered.join() !== [...TRACES].sort().join()) {
  throw new Error(`the bundle registers traces ${registered}, expected ${TRACES}`);
}

// Every package whose code is in the bundle, with its licence text (MIT and BSD ask for it in copies).
function packageRoot(file) {
  const parts = file.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at === -1) return null;
  const width = parts[at + 1].startsWith('@') ? 3 : 2;
  return parts.slice(0, at + width).join('/');
}

const inputs = Object.entries(result.metafile.outputs['plotly.min.js'].inputs);
// (a stylesheet is an empty module here: no code of its package is in the bundle)
const bundled = inputs.filter(([file, input]) => input.bytesInOutput > 0 && !file.endsWith('.css')).map(([file]) => packageRoot(file));
const roots = [...new Set(bundled.filter(Boolean))];
const notices = roots
  .map((root) => {
    const meta = JSON.parse(readFileSync(path.join(here, root, 'package.json'), 'utf8'));
    const file = readdirSync(path.join(here, root)).find((name) => /^(licen[cs]e|copying)/i.test(name));
    const text = file ? readFileSync(path.join(here, root, file), 'utf8').replace(/\r\n?/g, '\n').trim() : `(no licence file; package.json says: ${meta.license})`;
    return { name: meta.name, heading: `${meta.name}@${meta.version} (${meta.license})`, text };
  })
  .sort((a, b) => (a.name === 'plotly.js' ? -1 : b.name === 'plotly.js' ? 1 : a.name.localeCompare(b.name)));

const licence = [
  `plotly.js v${version}, partial bundle for sitegen (traces: ${TRACES.join(', ')}), and the packages bundled in it.`,
  '',
  ...notices.flatMap((n) => ['='.repeat(100), n.heading, '='.repeat(100), n.text, '']),
].join('\n');

if (!existsSync(assets)) throw new Error(`no folder ${assets}`);
writeFileSync(path.join(assets, 'plotly.min.js'), bundle.contents);
writeFileSync(path.join(assets, 'plotly.LICENSE.txt'), licence);
console.log(`plotly.js ${version}, traces ${registered.join(', ')}: ${bundle.contents.length} bytes, ${notices.length} packages`);
console.log(`wrote ${path.join(assets, 'plotly.min.js')} and plotly.LICENSE.txt`);
