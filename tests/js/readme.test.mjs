// The README's JavaScript example, run as written: its code block is
// copied next to webtensor.mjs and run by Node; what it prints must be what
// its comments say.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { webDir } from './harness.mjs';

it('the README example works as written', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.split('\n## JavaScript\n')[1];
  assert.ok(section, 'README has a "## JavaScript" section');
  const code = section.match(/```js\n([\s\S]*?)```/)[1];
  assert.ok(code.split('\n').filter((l) => l.trim()).length <= 10, 'the example is at most ten lines');
  const file = join(webDir, 'readme_example.mjs');
  writeFileSync(file, code);
  const out = execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 60000 });
  assert.match(out, /\[ 2, 2 \] \[ \[ 4, 5 \], \[ 10, 11 \] \]/);
  assert.match(out, /Float32Array\(4\) \[\s*0\.2689\d+,\s*0\.7310\d+,\s*0\.2689\d+,\s*0\.7310\d+\s*\]/);
  // What the comments promise is what it printed.
  for (const promised of code.matchAll(/\/\/ (\[ 2, 2 \].*)$/gm)) assert.ok(out.includes(promised[1]), promised[1]);
});
