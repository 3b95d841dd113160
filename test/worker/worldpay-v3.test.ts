import { describe, expect, inject, it } from 'vitest';
import { THREE_DS_MEDIA_TYPES, TOKENS_MEDIA_TYPES, type ApiVersion } from '../../src/media-types';
import { SCENARIOS } from '../../src/threeds/scenarios';
import { call, luhnComplete, TEST_AUTH } from './helpers';
import { authenticateBody, THREEDS, verifyBody } from './threeds-helpers';
import { tokenBody } from './token-helpers';

/**
 * What Worldpay's v3 documents give v3 clients where v1 differs (docs/compatibility.md
 * "Versions"), through the Worker's fetch in each media type. Every answer also goes through
 * `call`, which checks it against Worldpay's documents: a v3 answer exactly as the v3 document
 * has it, with none of the stand-ins kept for v1 (test/worker/worldpay-compat.ts).
 */

type Json = Record<string, any>;

const DS = THREE_DS_MEDIA_TYPES;
const TK = TOKENS_MEDIA_TYPES;
const VERSIONS: ApiVersion[] = [1, 2, 3];
const docs = inject('worldpay');
const LINK = (step: string): { href: string } => ({ href: `https://edge.test${THREEDS}/${step}` });

function threeDs(step: string, body: unknown, version: ApiVersion): Promise<Response> {
  return call(`${THREEDS}/${step}`, {
    body,
    headers: { Authorization: TEST_AUTH, Accept: DS[version], 'Content-Type': DS[version] },
  });
}

/** authenticate with a test name (in v3), its challenge passed through the sandbox control. */
async function passedChallenge(cardHolderName: string): Promise<{ reference: string; challenge: string }> {
  const body = authenticateBody({ cardHolderName });
  const auth = await (await threeDs('authenticate', body, 3)).json<Json>();
  expect(auth.outcome).toBe('challenged');
  const reference = body.transactionReference as string;
  const challenge = auth.challenge.reference as string;
  const completed = await threeDs(
    'sandbox/completeChallenge',
    { ...verifyBody(reference, challenge), result: 'passed' },
    1,
  );
  expect(completed.status).toBe(200);
  return { reference, challenge };
}

describe('verification outcomes per version: bypassed is not a v3 verification outcome', () => {
  it('answers the challenge of 3ds2-bypassed-after-challenge bypassed to v1 and v2, and unavailable to v3', async () => {
    const { reference, challenge } = await passedChallenge('3ds2-bypassed-after-challenge');
    const body = verifyBody(reference, challenge);
    // v3 first: the answer names no version, whichever version came first.
    const v3 = await threeDs('verification', body, 3);
    const v3Text = await v3.text();
    expect(v3.status).toBe(200);
    expect(v3.headers.get('Content-Type')).toBe(DS[3]);
    expect(JSON.parse(v3Text)).toEqual({
      outcome: 'unavailable',
      transactionReference: reference,
      status: 'U',
      _links: { '3ds:authenticate': LINK('authenticate'), '3ds:verify': LINK('verification') },
    });
    for (const version of [1, 2] as const) {
      const answer = await (await threeDs('verification', body, version)).json<Json>();
      expect(answer).toMatchObject({ outcome: 'bypassed', status: 'Y', enrolled: 'B' });
      expect(answer.authentication).toMatchObject({ version: '2.2.0', eci: '07' });
      expect(answer.authentication).not.toHaveProperty('authenticationValue');
    }
    // Repeated, v3 gets the same bytes.
    expect(await (await threeDs('verification', body, 3)).text()).toBe(v3Text);
  });

  it('keeps bypassed in authenticate for every version (v3 documents it there)', async () => {
    const body = authenticateBody({ cardHolderName: '3ds2-bypassed' });
    for (const version of VERSIONS) {
      const response = await threeDs('authenticate', body, version);
      expect(response.headers.get('Content-Type')).toBe(DS[version]);
      expect(await response.json<Json>()).toMatchObject({ outcome: 'bypassed', status: 'Y', enrolled: 'B' });
    }
  });

  const challenged = SCENARIOS.filter((s) => s.authenticate === 'challenged').map((s) => s.name);
  it.each(challenged)('answers a v3 verification of %s with an outcome of the v3 document', async (name) => {
    const { reference, challenge } = await passedChallenge(name);
    const response = await threeDs('verification', verifyBody(reference, challenge), 3);
    expect(response.status).toBe(200);
    expect(['authenticated', 'authenticationFailed', 'unavailable', 'signatureFailed']).toContain(
      (await response.json<Json>()).outcome,
    );
  });

  it.skipIf(docs === null)("reads the v3 verification outcomes from Worldpay's document", () => {
    const schema = docs!.operations.find((o) => o.operationId === 'verify')!.responses['200'] as Json;
    const outcomes = new Set<string>(
      (schema.anyOf as Json[]).flatMap((branch) => (branch.properties.outcome.enum as string[]) ?? []),
    );
    expect([...outcomes].sort()).toEqual(['authenticated', 'authenticationFailed', 'signatureFailed', 'unavailable']);
  });
});

describe("token errors per version: v3's tokenizationNotEnabled", () => {
  it.each(VERSIONS)(
    'answers POST /tokens from the non-PCI entity in v%i with the error of its version',
    async (version) => {
      const response = await call('/tokens', {
        body: tokenBody({ entity: 'nonpci' }),
        headers: { Authorization: TEST_AUTH, Accept: TK[version], 'Content-Type': TK[version] },
      });
      const body = await response.json<Json>();
      expect(response.headers.get('Content-Type')).toBe(TK[version]);
      if (version === 3) {
        expect(response.status).toBe(500);
        expect(body).toEqual({ errorName: 'tokenizationNotEnabled', message: expect.any(String) });
      } else {
        expect(response.status).toBe(400);
        expect(body.errorName).toBe('merchantIsNotConfigured');
      }
    },
  );

  it('answers every other token error alike in v1 and v3: the v3 document has them too', async () => {
    for (const version of [1, 3] as const) {
      const headers = { Authorization: TEST_AUTH, Accept: TK[version], 'Content-Type': TK[version] };
      const unknownEntity = await call('/tokens', { body: tokenBody({ entity: 'nobody' }), headers });
      expect(unknownEntity.status).toBe(400);
      expect((await unknownEntity.json<Json>()).errorName).toBe('entityIsNotConfigured');
      const unrecognized = await call('/tokens', {
        body: tokenBody({ cardNumber: luhnComplete('9999', 16) }),
        headers,
      });
      expect(unrecognized.status).toBe(422);
      expect((await unrecognized.json<Json>()).errorName).toBe('unrecognizedCardBrand');
      const missing = await call('/tokens/T0000000000000000', {
        method: 'GET',
        headers: { ...headers, 'Content-Type': undefined },
      });
      expect(missing.status).toBe(404);
      expect((await missing.json<Json>()).errorName).toBe('resourceNotFound');
    }
  });
});
