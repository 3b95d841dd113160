import { describe, expect, it } from 'vitest';
import { scenarioCard } from '../../src/fake-3ds-server/test-cards';
import { api, expectErro, fake, ORIGIN, preauth, transaction } from './fake-client';

/**
 * POST /preauth: the API key, the card range data of every versions digit and method digit, and
 * every Erro of a card that cannot be prepared.
 */

describe('the API key', () => {
  it.each([
    ['no key', null],
    ['a wrong key', 'not-the-key'],
  ])('refuses %s with 401 text/plain "Invalid API Key" on every endpoint', async (_, apiKey) => {
    for (const endpoint of ['preauth', 'auth', 'postauth']) {
      const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' };
      if (apiKey !== null) headers['APIKey'] = apiKey;
      const response = await fake(`/${endpoint}`, { method: 'POST', headers, body: '{}' });
      expect(response.status).toBe(401);
      expect(response.headers.get('Content-Type')).toBe('text/plain; charset=utf-8');
      expect(response.headers.get('X-Fake-3DS-Server')).toBe('fake-3ds-server');
      expect(await response.text()).toBe('Invalid API Key');
    }
  });

  it('takes the configured key (FAKE_API_KEY)', async () => {
    expect((await preauth(scenarioCard('2003'))).messageType).toBe('CRD');
  });
});

describe('card range data, by the first of the last four digits (versions offered)', () => {
  const ranges: [string, string, string, string, string, string[]][] = [
    ['0', '2.1.0', '2.3.1', '2.1.0', '2.3.1', ['2.1.0', '2.2.0', '2.3.1']],
    ['1', '2.1.0', '2.1.0', '2.1.0', '2.1.0', ['2.1.0']],
    ['2', '2.2.0', '2.2.0', '2.2.0', '2.2.0', ['2.2.0']],
    ['3', '2.3.1', '2.3.1', '2.3.1', '2.3.1', ['2.3.1']],
    ['4', '2.1.0', '2.2.0', '2.1.0', '2.3.1', ['2.1.0', '2.2.0']],
    ['5', '2.2.0', '2.3.1', '2.1.0', '2.3.1', ['2.2.0', '2.3.1']],
    ['6', '2.2.0', '2.3.1', '2.1.0', '2.3.1', ['2.2.0', '2.3.1']],
  ];
  it.each(ranges)('digit %s: ACS %s–%s, DS %s–%s', async (digit, acsStart, acsEnd, dsStart, dsEnd, listed) => {
    const card = scenarioCard(`${digit}000`);
    const crd = await preauth(card);
    expect(crd).toMatchObject({
      messageType: 'CRD',
      acsStartProtocolVersion: acsStart,
      acsEndProtocolVersion: acsEnd,
      dsStartProtocolVersion: dsStart,
      dsEndProtocolVersion: dsEnd,
      scheme: 'visa',
    });
    expect(crd.threeDSServerTransID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(crd.acsProtocolVersions.map((p: { version: string }) => p.version)).toEqual(listed);
  });

  it('gives one method URL for all versions, except digit 6: one per version, and they differ', async () => {
    const shared = await preauth(scenarioCard('0000'));
    expect(shared.threeDSMethodURL).toBe(`${ORIGIN}/acs/method`);
    for (const entry of shared.acsProtocolVersions) expect(entry.threeDSMethodURL).toBe(`${ORIGIN}/acs/method`);

    const perVersion = await preauth(scenarioCard('6000'));
    expect(perVersion.acsProtocolVersions).toEqual([
      { version: '2.2.0', threeDSMethodURL: `${ORIGIN}/acs/method/2.2.0` },
      { version: '2.3.1', threeDSMethodURL: `${ORIGIN}/acs/method/2.3.1` },
    ]);
    // The top-level URL is the oldest version's: a requestor must take the chosen version's.
    expect(perVersion.threeDSMethodURL).toBe(`${ORIGIN}/acs/method/2.2.0`);
  });
});

describe('the 3DS Method, by the second digit', () => {
  it.each([
    ['0', 'completes', true],
    ['1', 'none', false],
    ['2', 'never completes', true],
  ])('digit %s (%s): a method URL %s', async (digit, _, hasUrl) => {
    for (const versions of ['0', '6']) {
      const crd = await preauth(scenarioCard(`${versions}${digit}00`));
      expect(crd.threeDSMethodURL !== undefined).toBe(hasUrl);
      for (const entry of crd.acsProtocolVersions) expect(entry.threeDSMethodURL !== undefined).toBe(hasUrl);
    }
  });
});

describe('the scheme', () => {
  it.each([
    ['400010', 'visa'],
    ['510010', 'mastercard'],
    ['222100', 'mastercard'],
    ['340010', 'amex'],
    ['601100', 'standin'],
  ])('card prefix %s → %s', async (prefix, scheme) => {
    expect((await preauth(scenarioCard('2003', prefix))).scheme).toBe(scheme);
  });
});

describe('the transaction /preauth makes', () => {
  it('remembers the card, its scenario and when it was prepared (fake clock)', async () => {
    const card = scenarioCard('2003');
    const crd = await preauth(card);
    const tx = await transaction(crd.threeDSServerTransID);
    expect(tx).toMatchObject({ acctNumber: card, scenario: '2003', authCalls: 0, postauthCalls: 0 });
    expect(tx.method).toEqual({ offered: true });
    expect(Math.abs(tx.preparedAt - Date.now())).toBeLessThan(3_600_000);
  });

  it('gives each preparation its own threeDSServerTransID', async () => {
    const card = scenarioCard('2003');
    expect((await preauth(card)).threeDSServerTransID).not.toBe((await preauth(card)).threeDSServerTransID);
  });
});

describe('cards /preauth cannot prepare', () => {
  it('a card starting 9000 is enrolled with no DS: Erro 305 "Unknown BIN" (S)', async () => {
    const erro = expectErro(await api('preauth', { acctNumber: '9000100111111111' }), '305', 'S');
    expect(erro.errorDescription).toBe('Unknown BIN');
    expect(erro.errorDetail).toBe('No CRD found: the card is not enrolled with any known DS');
    expect(erro.errorMessageType).toBe('PReq');
  });

  it.each(['123456789012', '12345678901234567890', '4000 1005 1111 2003', '40001005111120a3'])(
    'a malformed acctNumber (%s): Erro 203',
    async (acctNumber) => {
      expect(expectErro(await api('preauth', { acctNumber }), '203', 'S').errorDetail).toBe('acctNumber');
    },
  );

  it('a number, not a string: Erro 203', async () => {
    expectErro(await api('preauth', { acctNumber: 4000100511112003 }), '203');
  });

  it('no acctNumber: Erro 201', async () => {
    expect(expectErro(await api('preauth', {}), '201').errorDetail).toBe('acctNumber');
  });

  it('a body that is not JSON: Erro 101', async () => {
    expectErro(await api('preauth', undefined, { rawBody: 'acctNumber=4000100511112003' }), '101');
  });

  it.each([
    ['7003', 'no versions digit 7'],
    ['0303', 'no method digit 3'],
    ['0098', 'an exemption refused with no challenge digit 8'],
    ['0078', 'no challenge digit 8'],
    ['1043', 'transStatus I on a card that only speaks 2.1.0'],
  ])('a card outside the grid (…%s, %s): Erro 305 "Transaction data not valid"', async (suffix) => {
    const erro = expectErro(await api('preauth', { acctNumber: scenarioCard(suffix) }), '305', 'S');
    expect(erro.errorDescription).toBe('Transaction data not valid');
  });
});

describe('the routes', () => {
  it('answers 405 to a GET of an endpoint, 404 elsewhere, and names itself at /', async () => {
    expect((await fake('/preauth')).status).toBe(405);
    expect((await fake('/nowhere', { method: 'POST' })).status).toBe(404);
    const root = await fake('/');
    expect(root.headers.get('X-Fake-3DS-Server')).toBe('fake-3ds-server');
    expect(await root.text()).toContain('fake-3ds-server');
  });
});
