/**
 * Where the test suite's time goes: vitest's JSON report turned into tables (docs/benchmarks.md
 * "The test suite").
 *
 *   npm run test:profile                      runs the whole suite with the JSON reporter, then prints
 *   npm run test:profile -- --from report.json  prints the tables of a report written earlier
 *   npm run test:profile -- --slowest 20       lists 20 files and tests instead of 10
 *
 * Per project: files, tests, the sum of its files' own time, and its span (first file's start to
 * last file's end: projects and files run side by side, so spans overlap and sums exceed the wall
 * time). Then the slowest files and the slowest tests. The project of a file is its folder under
 * test/ (vitest.config.ts names them so).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

interface AssertionResult {
  fullName: string;
  status: string;
  duration?: number | null;
}
interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
  status: string;
  assertionResults: AssertionResult[];
}
interface Report {
  startTime: number;
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: FileResult[];
}

export interface FileRow {
  project: string;
  file: string;
  tests: number;
  ms: number;
  start: number;
  end: number;
}

export interface ProjectRow {
  project: string;
  files: number;
  tests: number;
  sumMs: number;
  spanMs: number;
}

/** Each file of a report, with its project (its folder under test/) and its own time. */
export function fileRows(report: Report, root: string): FileRow[] {
  return report.testResults.map((r) => {
    const file = relative(root, r.name);
    const project = /^test\/([^/]+)\//.exec(file)?.[1] ?? '?';
    return {
      project,
      file,
      tests: r.assertionResults.length,
      ms: r.endTime - r.startTime,
      start: r.startTime,
      end: r.endTime,
    };
  });
}

/** The projects of a report: files, tests, their files' summed time and their span. */
export function projectRows(files: readonly FileRow[]): ProjectRow[] {
  const byProject = new Map<string, FileRow[]>();
  for (const f of files) byProject.set(f.project, [...(byProject.get(f.project) ?? []), f]);
  return [...byProject]
    .map(([project, rows]) => ({
      project,
      files: rows.length,
      tests: rows.reduce((n, r) => n + r.tests, 0),
      sumMs: rows.reduce((n, r) => n + r.ms, 0),
      spanMs: Math.max(...rows.map((r) => r.end)) - Math.min(...rows.map((r) => r.start)),
    }))
    .sort((a, b) => b.sumMs - a.sumMs);
}

const s = (ms: number): string => (ms / 1000).toFixed(1);

function table(head: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function profile(report: Report, root: string, slowest = 10): string {
  const files = fileRows(report, root);
  const wallMs = Math.max(...files.map((f) => f.end)) - report.startTime;
  const tests = report.testResults.flatMap((r) =>
    r.assertionResults.map((a) => ({ file: relative(root, r.name), name: a.fullName, ms: a.duration ?? 0 })),
  );
  return [
    `${report.numTotalTests} tests (${report.numPassedTests} passed, ${report.numFailedTests} failed, ` +
      `${report.numPendingTests} skipped) in ${files.length} files; vitest ${s(wallMs)} s from start to the last file's end`,
    '',
    table(
      ['project', 'files', 'tests', 'files summed s', 'span s'],
      projectRows(files).map((p) => [p.project, p.files, p.tests, s(p.sumMs), s(p.spanMs)]),
    ),
    '',
    `The ${slowest} slowest files:`,
    '',
    table(
      ['file', 'project', 'tests', 's', 'ms a test'],
      [...files]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, slowest)
        .map((f) => [f.file, f.project, f.tests, s(f.ms), Math.round(f.ms / Math.max(1, f.tests))]),
    ),
    '',
    `The ${slowest} slowest tests:`,
    '',
    table(
      ['test', 'file', 'ms'],
      [...tests]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, slowest)
        .map((t) => [t.name.replaceAll('|', '\\|'), t.file, Math.round(t.ms)]),
    ),
  ].join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  const slowest = Number(option('--slowest') ?? 10);
  let from = option('--from');
  let status = 0;
  if (from === undefined) {
    from = '.vitest-profile.json';
    const started = Date.now();
    const run = spawnSync('npx', ['vitest', 'run', '--reporter=dot', '--reporter=json', `--outputFile=${from}`], {
      stdio: 'inherit',
    });
    status = run.status ?? 1;
    console.log(`\nnpx vitest run: ${s(Date.now() - started)} s wall, exit ${status}\n`);
  }
  const report = JSON.parse(readFileSync(from, 'utf8')) as Report;
  console.log(profile(report, process.cwd(), slowest));
  process.exitCode = status;
}

main();
