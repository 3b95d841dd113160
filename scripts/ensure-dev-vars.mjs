// `npm start`: give wrangler dev the documented local secrets. A .dev.vars made from an older
// example gets the names it lacks added from the current one (its own values are kept).
import { appendFileSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.error('[start] created .dev.vars from .dev.vars.example (local test merchants)');
} else {
  const example = parseEnv(readFileSync('.dev.vars.example', 'utf8'));
  const own = parseEnv(readFileSync('.dev.vars', 'utf8'));
  const missing = Object.keys(example).filter((name) => !(name in own));
  if (missing.length > 0) {
    appendFileSync('.dev.vars', `\n${missing.map((name) => `${name}='${example[name]}'`).join('\n')}\n`);
    console.error(`[start] added ${missing.join(', ')} to .dev.vars from .dev.vars.example`);
  }
}
