// index.html preloads the page's modules: every module app.js imports, directly or not, and no
// other. One missing there is fetched an import level late (a cold page waits for each level);
// one too many is fetched for nothing.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const folder = new URL("../../Public/", import.meta.url);

/** The modules `file` imports (static imports of "./name.js", which is all the page uses). */
function importsOf(file) {
  const source = readFileSync(new URL(`js/${file}`, folder), "utf8");
  return [...source.matchAll(/^import\s+(?:[^;]*?\sfrom\s+)?"\.\/([\w-]+\.js)";/gms)].map((match) => match[1]);
}

function reachableFrom(entry) {
  const seen = new Set();
  const next = [entry];
  while (next.length > 0) {
    const file = next.pop();
    for (const imported of importsOf(file)) {
      if (!seen.has(imported)) {
        seen.add(imported);
        next.push(imported);
      }
    }
  }
  seen.delete(entry);
  return seen;
}

test("index.html preloads exactly the modules app.js reaches", () => {
  const html = readFileSync(new URL("index.html", folder), "utf8");
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="js\/([\w-]+\.js)">/g)].map((match) => match[1]);
  assert.equal(new Set(preloaded).size, preloaded.length, "each once");
  assert.deepEqual([...preloaded].sort(), [...reachableFrom("app.js")].sort());
  assert.ok(preloaded.length > 20, "the graph was read (a regular expression that matched nothing would pass the line above)");
});
