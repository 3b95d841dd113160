import { afterEach, describe, expect, it, vi } from 'vitest';
import { expect503, quiet } from './helpers';
import { StorageHarness, type Fault } from './faulty-env';
import type { Fetch } from './helpers';
import {
  authenticateBody,
  hiddenField,
  newReference,
  postForm,
  THREEDS_MEDIA,
  threeDs,
  verifyBody,
} from './threeds-helpers';

type Json = Record<string, any>;

afterEach(() => {
  vi.restoreAllMocks();
});

/** Each storage call of a path, failed in turn, before and after it reaches storage. */
function faults(n: number): [string, Fault][] {
  return Array.from({ length: n }, (_, nth) =>
    (['before', 'after'] as const).map((when): [string, Fault] => [
      `storage call ${nth + 1} of ${n} fails ${when} it reaches storage`,
      { nth, of: 'any', when },
    ]),
  ).flat();
}

/** A transaction authenticate answered `challenged`, with its reference and answer. */
async function challenged(): Promise<{ reference: string; auth: Json }> {
  const reference = newReference();
  const response = await threeDs(
    'authenticate',
    authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }),
  );
  return { reference, auth: await response.json<Json>() };
}

/** A 503 in the 3DS API's media type. */
const expectJson503 = (response: Response): Promise<void> => expect503(response, THREEDS_MEDIA);

function expectHtml503(response: Response): void {
  expect(response.status).toBe(503);
  expect(response.headers.get('Retry-After')).toMatch(/^\d+$/);
  expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
}

/** How many storage calls one clean run makes (the test fails each of them in turn). */
async function countCalls(run: (via: Fetch) => Promise<Response>): Promise<number> {
  const harness = new StorageHarness();
  const response = await run((r) => harness.fetch(r));
  expect(response.status).toBe(200);
  return harness.calls.length;
}

describe('deviceDataInitialize when its storage call fails', () => {
  const body = (): Json => ({ transactionReference: newReference(), merchant: { entity: 'default' } });
  it('makes one storage call', async () => {
    expect(await countCalls((via) => threeDs('deviceDataInitialize', body(), {}, via))).toBe(1);
  });
  it.each(faults(1))(
    '%s: 503 with Retry-After, and the retry answers as every later call does',
    async (_name, fault) => {
      quiet();
      const request = body();
      await expectJson503(
        await threeDs('deviceDataInitialize', request, {}, (r) => new StorageHarness().failOn(fault).fetch(r)),
      );
      const retry = await (await threeDs('deviceDataInitialize', request)).text();
      expect(await (await threeDs('deviceDataInitialize', request)).text()).toBe(retry);
    },
  );
});

describe('authenticate when its storage call fails', () => {
  it("makes one storage call, to the transaction's object (which projects the session to KV itself)", async () => {
    expect(
      await countCalls((via) =>
        threeDs('authenticate', authenticateBody({ cardHolderName: '3ds2-challenge-identified' }), {}, via),
      ),
    ).toBe(1);
  });

  it.each(faults(1))(
    '%s: the retry completes the same session, and the challenge still verifies',
    async (_name, fault) => {
      quiet();
      const reference = newReference();
      const body = authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' });
      const harness = new StorageHarness().failOn(fault);
      await expectJson503(await threeDs('authenticate', body, {}, (r) => harness.fetch(r)));
      const retry = await (await threeDs('authenticate', body)).json<Json>();
      expect(retry.outcome).toBe('challenged');
      expect(await (await threeDs('authenticate', body)).json()).toEqual(retry);
      const page = await (await postForm('/3ds/challenge', { JWT: retry.challenge.jwt })).text();
      await postForm('/3ds/challenge/submit', { state: hiddenField(page, 'state')!, code: '1234', action: 'submit' });
      expect(
        (await (await threeDs('verification', verifyBody(reference, retry.challenge.reference))).json<Json>()).outcome,
      ).toBe('authenticated');
    },
  );
});

describe('the challenge pages when their storage call fails', () => {
  async function challenged(): Promise<{ reference: string; auth: Json }> {
    const reference = newReference();
    return {
      reference,
      auth: await (
        await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }))
      ).json<Json>(),
    };
  }

  it('answers the DDC page with an HTML 503 and Retry-After; the repost records the collection', async () => {
    quiet();
    const init = await (
      await threeDs('deviceDataInitialize', { transactionReference: newReference(), merchant: { entity: 'default' } })
    ).json<Json>();
    const form = { JWT: init.deviceDataCollection.jwt, Bin: '457173' };
    expectHtml503(
      await postForm('/3ds/ddc', form, (r) =>
        new StorageHarness().failOn({ nth: 0, of: 'do', when: 'before' }).fetch(r),
      ),
    );
    expect(await (await postForm('/3ds/ddc', form)).text()).toContain('"Status":true');
  });

  it('answers the challenge page with an HTML 503 and Retry-After; the repost shows the challenge', async () => {
    quiet();
    const { auth } = await challenged();
    expectHtml503(
      await postForm('/3ds/challenge', { JWT: auth.challenge.jwt }, (r) =>
        new StorageHarness().failOn({ nth: 0, of: 'do', when: 'before' }).fetch(r),
      ),
    );
    expect(
      hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state'),
    ).toBeDefined();
  });

  it.each(faults(1))('never loses a right code: %s, the repost of the form passes', async (_name, fault) => {
    quiet();
    const { reference, auth } = await challenged();
    const state = hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state')!;
    const form = { state, code: '1234', action: 'submit' };
    expectHtml503(await postForm('/3ds/challenge/submit', form, (r) => new StorageHarness().failOn(fault).fetch(r)));
    expect(await (await postForm('/3ds/challenge/submit', form)).text()).toContain('Payment verified');
    expect(
      (await (await threeDs('verification', verifyBody(reference, auth.challenge.reference))).json<Json>()).outcome,
    ).toBe('authenticated');
  });
});

describe('verification when its storage call fails (one call: the object that decided)', () => {
  it.each(faults(1))(
    "%s: 503 with Retry-After, and the retry answers the challenge's one result",
    async (_name, fault) => {
      quiet();
      const reference = newReference();
      const auth = await (
        await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }))
      ).json<Json>();
      const page = await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text();
      await postForm('/3ds/challenge/submit', { state: hiddenField(page, 'state')!, code: '1234', action: 'submit' });
      const body = verifyBody(reference, auth.challenge.reference);
      await expectJson503(await threeDs('verification', body, {}, (r) => new StorageHarness().failOn(fault).fetch(r)));
      const retry = await (await threeDs('verification', body)).json<Json>();
      expect(retry.outcome).toBe('authenticated');
      expect(await (await threeDs('verification', body)).json()).toEqual(retry);
    },
  );
});

describe('sandbox completeChallenge when its storage call fails (one call: the object)', () => {
  it.each(faults(1))(
    '%s: 503 with Retry-After, and the retry ends the challenge as asked, once',
    async (_name, fault) => {
      quiet();
      const reference = newReference();
      const auth = await (
        await threeDs('authenticate', authenticateBody({ reference, cardHolderName: '3ds2-challenge-identified' }))
      ).json<Json>();
      const body = { ...verifyBody(reference, auth.challenge.reference), result: 'cancelled' };
      await expectJson503(
        await threeDs('sandbox/completeChallenge', body, {}, (r) => new StorageHarness().failOn(fault).fetch(r)),
      );
      const retry = await (await threeDs('sandbox/completeChallenge', body)).json<Json>();
      expect(retry.challenge.result).toBe('cancelled');
      expect(await (await threeDs('sandbox/completeChallenge', body)).json()).toEqual(retry);
      const verified = await (
        await threeDs('verification', verifyBody(reference, auth.challenge.reference))
      ).json<Json>();
      expect(verified.outcome).toBe('authenticationFailed');
    },
  );
});

describe('a request that fails beside identical ones', () => {
  it('changes nothing for the others: they get the one answer, and the session is projected once', async () => {
    quiet();
    const body = authenticateBody({ cardHolderName: '3ds2-challenge-identified' });
    const first = threeDs('authenticate', body);
    // This request's call to the object fails before it arrives; it holds nothing anyone waits for.
    const failing = new StorageHarness().failOn({ nth: 0, of: 'do', when: 'before' });
    await expectJson503(await threeDs('authenticate', body, {}, (r) => failing.fetch(r)));
    const [a, c] = await Promise.all([first, threeDs('authenticate', body)]);
    expect(await c.json()).toEqual(await a.json());
  });
});

describe('a challenge whose showing was recorded but whose page was lost', () => {
  it('shows the challenge again to the repost, which the right code then passes', async () => {
    quiet();
    const { reference, auth } = await challenged();
    const lost = new StorageHarness().failOn({ nth: 0, of: 'do', when: 'after' });
    expectHtml503(await postForm('/3ds/challenge', { JWT: auth.challenge.jwt }, (r) => lost.fetch(r)));
    const again = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt });
    expect(again.status).toBe(200);
    const state = hiddenField(await again.text(), 'state')!;
    const done = await postForm('/3ds/challenge/submit', { state, code: '1234', action: 'submit' });
    expect(await done.text()).toContain('Payment verified');
    expect(
      (await (await threeDs('verification', verifyBody(reference, auth.challenge.reference))).json<Json>()).outcome,
    ).toBe('authenticated');
  });

  it('gives the repost no extra attempt: two wrong codes before the loss and one after end the challenge', async () => {
    quiet();
    const { reference, auth } = await challenged();
    const first = hiddenField(await (await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).text(), 'state')!;
    for (const code of ['0000', '1111'])
      await postForm('/3ds/challenge/submit', { state: first, code, action: 'submit' });
    const lost = new StorageHarness().failOn({ nth: 0, of: 'do', when: 'after' });
    expectHtml503(await postForm('/3ds/challenge', { JWT: auth.challenge.jwt }, (r) => lost.fetch(r)));
    const again = await postForm('/3ds/challenge', { JWT: auth.challenge.jwt });
    const page = await again.text();
    const state = hiddenField(page, 'state')!;
    const last = await postForm('/3ds/challenge/submit', { state, code: '2222', action: 'submit' });
    expect(await last.text()).toContain('Payment not verified');
    expect(
      (await (await threeDs('verification', verifyBody(reference, auth.challenge.reference))).json<Json>()).outcome,
    ).toBe('authenticationFailed');
  });
});

describe('storage calls that hang', () => {
  /** Storage calls get a short deadline here, so that a hang costs the test a fraction of a second. */
  const SHORT = { STORAGE_TIMEOUT_MS: '300' } as Partial<Env>;

  it('answers 503 with Retry-After when verification’s guard call hangs, and the retry answers', async () => {
    quiet();
    const { reference, auth } = await challenged();
    const hung = new StorageHarness(SHORT).failOn({ nth: 0, of: 'do', when: 'hang' });
    await expectJson503(
      await threeDs('verification', verifyBody(reference, auth.challenge.reference), {}, (r) => hung.fetch(r)),
    );
    const verified = await threeDs('verification', verifyBody(reference, auth.challenge.reference));
    expect((await verified.json<Json>()).outcome).toBe('authenticationFailed');
  });

  it('answers the challenge page 503 (HTML, with Retry-After) when its guard call hangs, and the repost shows it', async () => {
    quiet();
    const { auth } = await challenged();
    const hung = new StorageHarness(SHORT).failOn({ nth: 0, of: 'do', when: 'hang' });
    expectHtml503(await postForm('/3ds/challenge', { JWT: auth.challenge.jwt }, (r) => hung.fetch(r)));
    expect((await postForm('/3ds/challenge', { JWT: auth.challenge.jwt })).status).toBe(200);
  });

  it("answers 503 when authenticate's call to the object hangs, and the retry gets the answer", async () => {
    quiet();
    const body = authenticateBody({ cardHolderName: '3ds2-frictionless-identified' });
    const hung = new StorageHarness(SHORT).failOn({ nth: 0, of: 'any', when: 'hang' });
    await expectJson503(await threeDs('authenticate', body, {}, (r) => hung.fetch(r)));
    expect((await (await threeDs('authenticate', body)).json<Json>()).outcome).toBe('authenticated');
  });
});
