import type { FakeEnv } from './env';

/** The Durable Object of one transaction, by its threeDSServerTransID. */
export function transactionStub(env: FakeEnv, threeDSServerTransID: string) {
  return env.TRANSACTIONS.get(env.TRANSACTIONS.idFromName(threeDSServerTransID));
}

/** The one control object. */
export function controlStub(env: FakeEnv) {
  return env.CONTROL.get(env.CONTROL.idFromName('control'));
}

/** The fake's clock: Date.now() plus the offset tests set. */
export async function fakeNow(env: FakeEnv): Promise<number> {
  return Date.now() + (await controlStub(env).clock());
}
