import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A copy of this tree's Worker (its sources, built data, static assets and configuration, with
 * node_modules borrowed) whose merchant configuration `edit` changes before it is bundled: a
 * Worker served beside the tree's own with merchants of its own (the served fuzz and migration
 * tests). `data/merchants.json` is bundled into the Worker, so a configuration change is a build
 * of its own; the tree itself is never touched.
 */

const PARTS = ['src', 'data', 'public', 'wrangler.toml', 'tsconfig.json', 'package.json', '.dev.vars.example'];

export interface MerchantFile {
  merchants: ({ username: string } & Record<string, unknown>)[];
}

export function treeWithMerchants(
  root: string,
  edit: (config: MerchantFile) => void,
): { dir: string; remove: () => void } {
  if (!existsSync(join(root, 'data', 'bin-index.bin')))
    throw new Error('data/bin-index.bin is missing: run npm run build:data first');
  return treeIn('card-edge-tree-', root, edit, (dir) => {
    for (const part of PARTS) cpSync(join(root, part), join(dir, part), { recursive: true });
  });
}

/**
 * A new temporary folder that `fill` puts a Worker's tree in, then node_modules borrowed from
 * `root` and `edit` applied to its data/merchants.json; removed again if any of it fails.
 */
export function treeIn(
  prefix: string,
  root: string,
  edit: (config: MerchantFile) => void,
  fill: (dir: string) => void,
): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    fill(dir);
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const path = join(dir, 'data', 'merchants.json');
    const config = JSON.parse(readFileSync(path, 'utf8')) as MerchantFile;
    edit(config);
    writeFileSync(path, JSON.stringify(config, null, 2));
    return { dir, remove };
  } catch (e) {
    remove();
    throw e;
  }
}
