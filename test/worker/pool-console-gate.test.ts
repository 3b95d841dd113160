import { runInDurableObject } from 'cloudflare:test';
import { expect, it } from 'vitest';
import { threeDsObject } from './projection-helpers';

/**
 * The test pool's patch (scripts/patches/, docs/README.md "The test pool's patch"): a Durable
 * Object that logs and then breaks its input gate (as an object reset mid-call, or a storage call
 * failing inside it, does in the fault tests) must not stop this file from ending. Unpatched,
 * vitest-pool-workers 0.15.1 sends the object's log lines through a call that can never complete
 * once the gate broke, and Vitest's end of file waits on that call forever: `npm test` never
 * exits. The assertion checks that the scenario happened; the file ending is the regression check.
 */
it('a Durable Object that logs and then breaks its input gate leaves the file able to end', async () => {
  const stub = threeDsObject(`pool-console-gate-${crypto.randomUUID()}`);
  await expect(
    runInDurableObject(stub, (_object, state) =>
      state.blockConcurrencyWhile(async () => {
        console.log('a log line from the object, before its gate breaks');
        console.error('and another');
        await Promise.resolve();
        throw new Error('the gate breaks');
      }),
    ),
  ).rejects.toThrow('the gate breaks');
});
