import { describe, expect, it } from 'vitest';
import { documentedTable, folderOf, layersTable } from '../../scripts/import-layers.ts';

describe('the layers of src/ (docs/README.md)', () => {
  it('counts modules by folder, src/threeds/ by its subfolders, the entries and the base files apart', () => {
    expect(folderOf('src/index.ts')).toBe('(entries)');
    expect(folderOf('src/failures.ts')).toBe('(base files)');
    expect(folderOf('src/threeds/api-paths.ts')).toBe('threeds/');
    expect(folderOf('src/threeds/transaction/session.ts')).toBe('threeds/transaction/');
    expect(folderOf('src/tokens/token-group.ts')).toBe('tokens/');
  });

  it('docs/README.md holds the table the imports give (npm run layers -- --write rewrites it)', async () => {
    const table = await layersTable();
    expect(table).toContain('| `storage/` |');
    // storage/ imports no domain folder: the rule of .dependency-cruiser.cjs, seen in the table too.
    expect(table).toMatch(/\| `storage\/` \| (`\(base files\)` )?`config\/` \|/);
    expect(documentedTable()).toBe(table);
  }, 60_000);
});
