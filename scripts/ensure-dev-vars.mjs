// `npm start` on a fresh clone: give wrangler dev the documented local secrets.
import { copyFileSync, existsSync } from 'node:fs';

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.error('[start] created .dev.vars from .dev.vars.example (local test merchants)');
}
