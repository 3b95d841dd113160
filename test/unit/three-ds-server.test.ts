import { describe, expect, it } from 'vitest';
import {
  AuthenticationOutcomeUnknown,
  ProviderRefusedCredentials,
  ProviderUnavailable,
  threeDsecureIo,
  type Transport,
} from '../../src/threeds/live/three-ds-server';
import type { AuthenticationRequest } from '../../src/threeds/live/emv-messages';

/**
 * The 3dsecure.io adapter over a transport that answers as told: what it sends (path, APIKey,
 * JSON in UTF-8) and how each kind of answer is classified. The classification decides whether a
 * failed AReq may be sent again (ProviderUnavailable: it never reached a Directory Server) or
 * never (AuthenticationOutcomeUnknown), so every row matters.
 */

const TRANS_ID = '8a880dc0-d2d2-4067-bcb1-b08d1690b26e';
const AREQ: AuthenticationRequest = { messageType: 'AReq', messageVersion: '2.2.0', threeDSServerTransID: TRANS_ID };

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

const erro = (errorCode: string, errorComponent: string, errorDescription: string, errorDetail = '') => ({
  messageType: 'Erro',
  messageVersion: '2.2.0',
  errorCode,
  errorComponent,
  errorDescription,
  errorDetail,
});

/** An adapter whose transport answers `answer` and records what it was sent. */
function adapter(answer: (request: Request) => Promise<Response> | Response, timeoutMs = 5_000) {
  const sent: { url: string; headers: Headers; body: unknown }[] = [];
  const transport: Transport = async (request) => {
    sent.push({ url: request.url, headers: request.headers, body: await request.clone().json() });
    return answer(request);
  };
  const provider = threeDsecureIo({
    baseUrl: 'https://provider.example/',
    apiKey: 'secret-key',
    transport,
    timeouts: { prepare: timeoutMs, authenticate: timeoutMs, result: timeoutMs },
  });
  return { provider, sent };
}

const never = (): Promise<Response> => new Promise(() => {});

describe('the 3dsecure.io adapter', () => {
  it('posts JSON in UTF-8 with the APIKey header to /preauth, /auth and /postauth', async () => {
    const { provider, sent } = adapter((r) =>
      r.url.endsWith('/preauth')
        ? json(200, {
            messageType: 'CRD',
            threeDSServerTransID: TRANS_ID,
            acsStartProtocolVersion: '2.1.0',
            acsEndProtocolVersion: '2.2.0',
          })
        : r.url.endsWith('/auth')
          ? json(200, {
              messageType: 'ARes',
              messageVersion: '2.2.0',
              threeDSServerTransID: TRANS_ID,
              acsTransID: 'a',
              dsTransID: 'd',
              transStatus: 'Y',
            })
          : json(200, {
              messageType: 'RReq',
              messageVersion: '2.2.0',
              threeDSServerTransID: TRANS_ID,
              acsTransID: 'a',
              dsTransID: 'd',
              transStatus: 'N',
            }),
    );
    expect(await provider.prepare({ acctNumber: '4000000000002003' })).toMatchObject({ kind: 'prepared' });
    expect(await provider.authenticate(AREQ)).toMatchObject({ kind: 'ares', ares: { transStatus: 'Y' } });
    expect(await provider.result(TRANS_ID)).toMatchObject({ kind: 'rreq', rreq: { transStatus: 'N' } });
    expect(sent.map((s) => s.url)).toEqual([
      'https://provider.example/preauth',
      'https://provider.example/auth',
      'https://provider.example/postauth',
    ]);
    for (const s of sent) {
      expect(s.headers.get('APIKey')).toBe('secret-key');
      expect(s.headers.get('Content-Type')).toBe('application/json; charset=utf-8');
    }
    expect(sent[0]!.body).toEqual({ acctNumber: '4000000000002003' });
    expect(sent[2]!.body).toEqual({ threeDSServerTransID: TRANS_ID });
  });

  it('reads Erro 305 "Unknown BIN" from /preauth as not enrolled', async () => {
    const { provider } = adapter(() =>
      json(
        200,
        erro('305', 'S', 'Unknown BIN', 'No CRD found, card with BIN ****** is not enrolled with any known DS'),
      ),
    );
    expect(await provider.prepare({ acctNumber: '4000000000002003' })).toEqual({ kind: 'notEnrolled' });
  });

  it('says a refused key is the service misconfigured, on every call', async () => {
    const { provider } = adapter(() => new Response('Unauthorized', { status: 401 }));
    await expect(provider.prepare({ acctNumber: '4000000000002003' })).rejects.toBeInstanceOf(
      ProviderRefusedCredentials,
    );
    await expect(provider.authenticate(AREQ)).rejects.toBeInstanceOf(ProviderRefusedCredentials);
    await expect(provider.result(TRANS_ID)).rejects.toBeInstanceOf(ProviderRefusedCredentials);
  });

  it.each([
    ['a 503 with no JSON', () => new Response('Service Unavailable', { status: 503 })],
    ['a 500 with a JSON object', () => json(500, { error: 'boom' })],
    ['a network failure', () => Promise.reject(new TypeError('fetch failed'))],
    ['an Erro of the 3DS Server itself with a 5xx', () => json(503, erro('403', 'S', 'Transient system failure'))],
  ])('counts %s on /auth as unavailable before any DS saw the AReq (it may be sent again)', async (_, answer) => {
    const { provider } = adapter(answer);
    await expect(provider.authenticate(AREQ)).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('counts /auth outlasting its deadline as an outcome unknown: the AReq may have reached the DS', async () => {
    const { provider } = adapter(never, 30);
    const error = await provider.authenticate(AREQ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationOutcomeUnknown);
    expect(error).not.toBeInstanceOf(ProviderUnavailable);
  });

  it.each([
    ['a message that is not an ARes', () => json(200, { messageType: 'CRes' })],
    ['JSON that is not an object', () => json(200, 'ok')],
    ['a body that is not JSON', () => new Response('<html>', { status: 200 })],
  ])('counts a 200 with %s as an outcome unknown: the provider handled the AReq', async (_, answer) => {
    const { provider } = adapter(answer);
    await expect(provider.authenticate(AREQ)).rejects.toBeInstanceOf(AuthenticationOutcomeUnknown);
  });

  it('asks for a preparation once more when the transport failed with no answer (a closed pooled connection); never /auth', async () => {
    const crd = {
      messageType: 'CRD',
      threeDSServerTransID: TRANS_ID,
      acsStartProtocolVersion: '2.1.0',
      acsEndProtocolVersion: '2.2.0',
    };
    let failures = 1;
    const once = adapter(() => {
      if (failures-- > 0) throw new TypeError('Network connection lost.');
      return json(200, crd);
    });
    expect(await once.provider.prepare({ acctNumber: '4000000000002003' })).toMatchObject({ kind: 'prepared' });
    expect(once.sent).toHaveLength(2);
    const down = adapter(() => {
      throw new TypeError('Network connection lost.');
    });
    await expect(down.provider.prepare({ acctNumber: '4000000000002003' })).rejects.toBeInstanceOf(ProviderUnavailable);
    expect(down.sent).toHaveLength(2);
    // An AReq may have left before the connection failed: it is never sent twice by the adapter.
    await expect(down.provider.authenticate(AREQ)).rejects.toBeInstanceOf(ProviderUnavailable);
    expect(down.sent).toHaveLength(3);
  });

  it('says which cards the provider will not prepare, apart from an outage', async () => {
    const { provider } = adapter(() => json(200, erro('305', 'S', 'Transaction data not valid')));
    expect(await provider.prepare({ acctNumber: '4000000000002003' })).toMatchObject({
      kind: 'refused',
      erro: { errorCode: '305' },
    });
    const down = adapter(() => json(503, erro('403', 'S', 'Transient system failure')));
    await expect(down.provider.prepare({ acctNumber: '4000000000002003' })).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('aborts a call past its deadline', async () => {
    let aborted = false;
    const { provider } = adapter(
      (request) =>
        new Promise<Response>((_, reject) =>
          request.signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
      30,
    );
    await expect(provider.result(TRANS_ID)).rejects.toBeInstanceOf(ProviderUnavailable);
    expect(aborted).toBe(true);
  });

  it('returns an Erro from the DS or the ACS as an answer (the AReq was handled)', async () => {
    const { provider } = adapter(() =>
      json(200, erro('405', 'D', 'Unable to contact Directory Server', 'Connection timeout')),
    );
    expect(await provider.authenticate(AREQ)).toMatchObject({ kind: 'erro', erro: { errorCode: '405' } });
  });

  it('counts /preauth and /postauth outlasting their deadlines as unavailable (they decide nothing)', async () => {
    const { provider } = adapter(never, 30);
    await expect(provider.prepare({ acctNumber: '4000000000002003' })).rejects.toBeInstanceOf(ProviderUnavailable);
    await expect(provider.result(TRANS_ID)).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('tells a result not there yet from one the provider no longer holds', async () => {
    const pending = adapter(() =>
      json(200, erro('305', 'S', 'Transaction data not valid', 'No RReq has been received')),
    );
    expect(await pending.provider.result(TRANS_ID)).toEqual({ kind: 'pending' });
    const gone = adapter(() =>
      json(200, erro('203', 'S', 'Format of one or more data elements is invalid', 'Unknown threeDSServerTransID')),
    );
    expect(await gone.provider.result(TRANS_ID)).toEqual({ kind: 'gone' });
    const broken = adapter(() => json(200, { messageType: 'RReq' }));
    await expect(broken.provider.result(TRANS_ID)).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('never puts the API key or the card number in an error message', async () => {
    for (const answer of [() => new Response('no', { status: 401 }), () => json(500, {}), never]) {
      const { provider } = adapter(answer, 30);
      const error = (await provider.prepare({ acctNumber: '4000000000002003' }).catch((e: unknown) => e)) as Error;
      expect(error.message).not.toContain('secret-key');
      expect(error.message).not.toContain('4000000000002003');
    }
  });
});
