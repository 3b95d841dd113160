import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

/**
 * A small HTTP load generator for the benchmark: `connections` keep-alive connections, each
 * sending its next request as soon as the last answer is read, for a fixed number of requests.
 * It reports requests per second, latency percentiles, how many connections the server closed
 * or reset, and the server process's CPU time per request (read from /proc, so a workerd child
 * process is measured apart from this one).
 */

export interface LoadRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Server CPU (user + system) per request, ms; NaN without a pid. */
  cpuMsPerRequest: number;
  /** Answers by status. */
  statuses: Record<number, number>;
  /** Connections the server reset (ECONNRESET, socket hang up). */
  resets: number;
  /** New connections opened beyond the first `connections` (the server closed keep-alive). */
  reconnects: number;
}

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

export async function load(
  base: URL,
  options: { connections: number; requests: number; next: (i: number) => LoadRequest; serverPid?: number },
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  let sockets = 0;
  agent.on('free', () => undefined);
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let resets = 0;
  let sent = 0;
  const cpuBefore = options.serverPid ? processCpuSeconds(options.serverPid) : NaN;
  const began = performance.now();
  const one = (r: LoadRequest): Promise<void> =>
    new Promise((resolve) => {
      const start = performance.now();
      const req = request(
        new URL(r.path, base),
        {
          method: r.method,
          headers: { ...r.headers, ...(r.body ? { 'Content-Length': String(Buffer.byteLength(r.body)) } : {}) },
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - start);
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('socket', (socket) => {
        if (!(socket as { counted?: boolean }).counted) {
          (socket as { counted?: boolean }).counted = true;
          sockets++;
        }
      });
      req.on('error', () => {
        resets++;
        resolve();
      });
      req.end(r.body);
    });
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (sent < options.requests) await one(options.next(sent++));
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  const cpu = options.serverPid ? processCpuSeconds(options.serverPid) - cpuBefore : NaN;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    requests: options.requests,
    requestsPerSecond: options.requests / seconds,
    p50: at(0.5),
    p99: at(0.99),
    cpuMsPerRequest: (cpu * 1000) / options.requests,
    statuses,
    resets,
    reconnects: Math.max(0, sockets - options.connections),
  };
}
