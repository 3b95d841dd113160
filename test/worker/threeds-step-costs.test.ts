import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { ThreeDsTransaction } from '../../src/threeds/transaction/transaction-object';
import { objectStorage } from '../../src/storage/object-storage';
import { threeDsObject } from './projection-helpers';
import { describeTally, StorageCounter } from './storage-counter';
import { cardFront, newReference, postForm, RETURN_URL, threeDs } from './threeds-helpers';

/**
 * What each 3-D Secure step costs its transaction's object in storage (docs/benchmarks.md "3DS
 * flows"): the SQLite statements and the storage API calls, during the call (before the answer)
 * and after it (the KV projection's write, the event's append, the alarm set again), for the
 * flows the bench drives. Pinned, so that a change that adds a statement or a round trip to a
 * step says so here.
 */

type Json = Record<string, any>;

/** The object's methods each step calls (the alarm too: a flow it runs in is counted again). */
const METHODS = [
  'initialize',
  'collect',
  'authenticate',
  'showChallenge',
  'submitChallenge',
  'concludeChallenge',
  'alarm',
] as const;

const counter = new StorageCounter();
/** The service's interval, put back after the file (whatever its tests or this setup did). */
const keyWriteIntervalMs = objectStorage.keyWriteIntervalMs;

beforeAll(async () => {
  // A challenge's result is written to KV at once, as in a flow slower than KV's second.
  objectStorage.keyWriteIntervalMs = 0;
  await counter.install(threeDsObject(newReference()));
  counter.labelCalls(ThreeDsTransaction.prototype, METHODS);
});

afterAll(() => {
  objectStorage.keyWriteIntervalMs = keyWriteIntervalMs;
  counter.restore();
});

/** Waits until the object has done what it left for after the answer (its write and its append). */
async function settled(stub: DurableObjectStub): Promise<void> {
  await vi.waitFor(
    async () => {
      const pending = await runInDurableObject(stub, (_o, state) =>
        counter.uncounted(() => {
          const sql = state.storage.sql;
          const tables = sql
            .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name IN ('outbox', 'events_out')")
            .toArray()
            .map((t) => t.name);
          const outbox = tables.includes('outbox')
            ? sql.exec('SELECT 1 FROM outbox WHERE staged > written OR sent_at IS NOT NULL').toArray().length
            : 0;
          const events = tables.includes('events_out') ? sql.exec('SELECT 1 FROM events_out').toArray().length : 0;
          return outbox + events;
        }),
      );
      expect(pending).toBe(0);
    },
    { timeout: 20_000, interval: 50 },
  );
  // Its alarm set again after the write: microtasks after the last statement, well within this.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** One flow, as the bench drives it, with each step's counts (`step: in call` / `step: after`). */
async function flow(kind: 'frictionless' | 'challenged'): Promise<Counted | undefined> {
  const reference = newReference();
  const stub = threeDsObject(reference);
  const counts: Record<string, string> = {};
  let alarmRan = false;
  const traces: Record<string, string[]> = {};
  const step = async (name: string, method: string, send: () => Promise<Response>): Promise<Response> => {
    const response = await send();
    expect(response.status, name).toBe(200);
    await response.clone().arrayBuffer();
    await settled(stub);
    const taken = await counter.take(stub);
    if ([...taken.keys()].some((label) => label.startsWith('alarm'))) alarmRan = true;
    const extra = [...taken.keys()].filter(
      (label) => label !== 'constructor' && label !== `${method} in call` && label !== `${method} after`,
    );
    expect(extra, name).toEqual(alarmRan ? extra : []);
    const constructed = taken.get('constructor');
    if (constructed) counts[`${name}: constructor`] = describeTally(constructed);
    counts[`${name}: in call`] = describeTally(taken.get(`${method} in call`));
    counts[`${name}: after`] = describeTally(taken.get(`${method} after`));
    traces[name] = [...taken.entries()].flatMap(([label, t]) => t.trace.map((q) => `${label}: ${q}`));
    return response;
  };
  const merchant = { entity: 'default' };
  const card = cardFront();
  const init: Json = await (
    await step('deviceDataInitialize', 'initialize', () =>
      threeDs('deviceDataInitialize', { transactionReference: reference, merchant, paymentInstrument: card }),
    )
  ).json();
  const ddc = await (
    await step('DDC page', 'collect', () =>
      postForm('/3ds/ddc', { JWT: init.deviceDataCollection.jwt as string, Bin: '457173' }),
    )
  ).text();
  const sessionId = /"SessionId":"([^"]+)"/.exec(ddc)![1]!;
  const challenged = kind === 'challenged';
  const auth: Json = await (
    await step('authenticate', 'authenticate', () =>
      threeDs('authenticate', {
        transactionReference: reference,
        merchant,
        instruction: {
          value: { amount: 1000, currency: 'GBP' },
          paymentInstrument: challenged ? cardFront('3ds2-challenge-identified') : card,
        },
        deviceData: { acceptHeader: 'text/html', userAgentHeader: 'test', collectionReference: sessionId },
        challenge: { returnUrl: RETURN_URL, ...(challenged ? {} : { preference: 'noChallengeRequested' }) },
      }),
    )
  ).json();
  expect(auth.outcome).toBe(challenged ? 'challenged' : 'authenticated');
  if (challenged) {
    const form = await (
      await step('challenge page', 'showChallenge', () =>
        postForm('/3ds/challenge', { JWT: auth.challenge.jwt as string, MD: 'test' }),
      )
    ).text();
    const state = /name="state" value="([^"]+)"/.exec(form)![1]!;
    await step('challenge form post', 'submitChallenge', () =>
      postForm('/3ds/challenge/submit', { state, code: '1234', action: 'submit' }),
    );
    const verified: Json = await (
      await step('verification', 'concludeChallenge', () =>
        threeDs('verification', {
          transactionReference: reference,
          merchant,
          challenge: { reference: auth.challenge.reference },
        }),
      )
    ).json();
    expect(verified.outcome).toBe('authenticated');
  }
  // A new instance of the object (as after an eviction or a deployment): its start.
  await counter.take(stub);
  await runInDurableObject(stub, (_o, state) => void new ThreeDsTransaction(state, env));
  const start = [...(await counter.take(stub)).values()];
  expect(start.length).toBeLessThanOrEqual(1);
  counts['a later instance: constructor'] = describeTally(start[0]);
  traces['a later instance'] = start[0]?.trace ?? [];
  // An alarm that ran meanwhile (a busy machine) mixed its work into a step's: counted again.
  return alarmRan ? undefined : { counts, traces };
}

/** Each step's counts, and what it ran (the message of a count that moved). */
interface Counted {
  counts: Record<string, string>;
  traces: Record<string, string[]>;
}

async function expectCounts(kind: 'frictionless' | 'challenged', pinned: Record<string, string>): Promise<void> {
  for (let tries = 0; tries < 3; tries++) {
    const counted = await flow(kind);
    if (!counted) continue;
    expect(counted.counts, JSON.stringify(counted.traces, null, 1)).toEqual(pinned);
    return;
  }
  throw new Error(`every ${kind} flow ran into an alarm`);
}

/** The steps before authenticate, the same in both flows: a new object, its tables created by the first. */
const BEFORE_AUTHENTICATE = {
  'deviceDataInitialize: constructor': '1 sql',
  'deviceDataInitialize: in call': '26 sql, setAlarm 1, transactionSync 1',
  'deviceDataInitialize: after': '0 sql',
  'DDC page: in call': '4 sql',
  'DDC page: after': '0 sql',
};

/** Each flow's steps from authenticate on, and a later instance's start. */
const FROM_AUTHENTICATE: Record<'frictionless' | 'challenged', Record<string, string>> = {
  frictionless: {
    'authenticate: in call': '27 sql, setAlarm 1, transactionSync 1',
    'authenticate: after': '11 sql, setAlarm 1',
    'a later instance: constructor': '2 sql',
  },
  challenged: {
    'authenticate: in call': '23 sql, setAlarm 1, transactionSync 1',
    'authenticate: after': '9 sql, setAlarm 1',
    'challenge page: in call': '3 sql, transactionSync 1',
    'challenge page: after': '0 sql',
    'challenge form post: in call': '26 sql, setAlarm 1, transactionSync 1',
    'challenge form post: after': '11 sql, setAlarm 1',
    'verification: in call': '3 sql, transactionSync 1',
    'verification: after': '0 sql',
    'a later instance: constructor': '2 sql',
  },
};

describe("each 3DS step's storage work in its transaction's object", () => {
  it.each(['frictionless', 'challenged'] as const)('%s', async (kind) => {
    await expectCounts(kind, { ...BEFORE_AUTHENTICATE, ...FROM_AUTHENTICATE[kind] });
  });
});
