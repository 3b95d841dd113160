import type { ThreeDsServerSettings } from '../../config/settings';
import { FailureError } from '../../failures';
import type {
  AuthenticationRequest,
  AuthenticationResponse,
  CardRangeData,
  ErrorMessage,
  ResultsRequest,
} from './emv-messages';

/**
 * A licensed 3DS Server provider, behind one provider-neutral interface (docs/threeds.md "Live":
 * "The 3DS Server"): prepare a card (its card range data and a transaction id), authenticate
 * (AReq → ARes, or an EMV error), fetch a challenge's result (RReq). The outbound transport is
 * injected: global `fetch` with the provider's credentials in production, a service binding to
 * the fake provider in tests and local development, or an mTLS binding for providers that want
 * one.
 */

/** What preparing a card gave. */
export type Prepared =
  | { kind: 'prepared'; crd: CardRangeData }
  /** No Directory Server knows the card (EMV's "Unknown BIN"). */
  | { kind: 'notEnrolled' }
  /** The provider will not prepare the card, for another reason its Erro gives. */
  | { kind: 'refused'; erro: ErrorMessage };

/** What an AReq gave: the ARes, or an EMV error once it reached the DS or the ACS. */
export type Authenticated = { kind: 'ares'; ares: AuthenticationResponse } | { kind: 'erro'; erro: ErrorMessage };

/** What asking for a challenge's result gave. */
export type ChallengeOutcome =
  | { kind: 'rreq'; rreq: ResultsRequest }
  /** The ACS has not sent it yet. */
  | { kind: 'pending' }
  /** The provider no longer holds it (or never heard of the transaction). */
  | { kind: 'gone' };

export interface ThreeDsServer {
  prepare(card: { acctNumber: string }): Promise<Prepared>;
  authenticate(areq: AuthenticationRequest): Promise<Authenticated>;
  result(threeDSServerTransID: string): Promise<ChallengeOutcome>;
}

/** The way out to the provider: `fetch`'s signature, so a service binding or an mTLS binding fits. */
export type Transport = (request: Request) => Promise<Response>;

/**
 * A live deployment without its provider's settings: a misconfiguration of this service (the
 * error format's 503), before anything is asked of anyone.
 */
export function providerMissing(): FailureError {
  const what = 'live 3-D Secure needs THREEDS_SERVER_URL and THREEDS_SERVER_API_KEY';
  return new FailureError({ kind: 'misconfigured', what }, what);
}

/**
 * The provider did not answer usably (unreachable, 5xx, an answer that is not its JSON, past our
 * deadline) before the AReq could have reached the DS: a 503 with Retry-After, nothing decided.
 */
export class ProviderUnavailable extends FailureError {
  constructor(what: string, options?: { cause?: unknown }) {
    super({ kind: 'providerUnavailable' }, what, options);
    this.name = 'ProviderUnavailable';
  }
}

/**
 * The provider refused the service's own credentials: a misconfiguration of this service, a 500
 * logged as such (the merchant can do nothing about it).
 */
export class ProviderRefusedCredentials extends FailureError {
  constructor(what: string) {
    super({ kind: 'providerMisconfigured', what }, what);
    this.name = 'ProviderRefusedCredentials';
  }
}

/**
 * The AReq was sent but its answer is unknown (our deadline passed while the provider worked on
 * it): it may have reached the DS, so it is never sent again.
 */
export class AuthenticationOutcomeUnknown extends FailureError {
  constructor(what: string, options?: { cause?: unknown }) {
    super({ kind: 'providerUnavailable' }, what, options);
    this.name = 'AuthenticationOutcomeUnknown';
  }
}

export interface ThreeDsecureIoConfig {
  /** `https://service.3dsecure.io` (production) or the sandbox; any base URL for a fake. */
  baseUrl: string;
  /** The provider's API key (the `APIKey` header). Never logged. */
  apiKey: string;
  transport: Transport;
  /** Deadlines of each call, ms: the provider answers /auth within 10 s (its DS timeout). */
  timeouts?: { prepare?: number; authenticate?: number; result?: number };
}

const DEFAULT_TIMEOUTS = { prepare: 5_000, authenticate: 15_000, result: 5_000 };

/**
 * The live 3DS Server provider (docs/threeds.md "Live": "The 3DS Server"): 3dsecure.io's API at
 * THREEDS_SERVER_URL with the THREEDS_SERVER_API_KEY secret, reached over the THREEDS_SERVER
 * service binding when there is one (tests and local development bind the fake provider), else
 * over the Internet. The steps and the transaction's object (its challenge watch) both call it.
 */
export function threeDsServerOf(env: Pick<Env, 'THREEDS_SERVER'>, config: ThreeDsServerSettings): ThreeDsServer {
  const binding = env.THREEDS_SERVER;
  const quick = Math.min(5_000, config.authenticateTimeoutMs);
  return threeDsecureIo({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    timeouts: { prepare: quick, authenticate: config.authenticateTimeoutMs, result: quick },
    transport: binding ? (request) => binding.fetch(request) : (request) => fetch(request),
  });
}

/**
 * 3dsecure.io's published API: `POST /preauth` ({acctNumber} → card range data), `POST /auth`
 * (AReq → ARes or Erro), `POST /postauth` ({threeDSServerTransID} → RReq), JSON in UTF-8, the key
 * in the `APIKey` header; a refused key is 401 with a text body; errors are EMV Erro JSON.
 */
export function threeDsecureIo(config: ThreeDsecureIoConfig): ThreeDsServer {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...config.timeouts };
  const base = config.baseUrl.replace(/\/+$/, '');

  /**
   * One call within its deadline (sending, and reading the whole answer): the status and the JSON
   * object answered (undefined when the body is not one), or the provider's unavailability. A call
   * past its deadline is aborted.
   */
  async function call(path: string, body: unknown, timeoutMs: number, attempts = 1): Promise<Exchange> {
    const controller = new AbortController();
    const request = (): Request =>
      new Request(`${base}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json; charset=utf-8', APIKey: config.apiKey },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new DeadlinePassed(`${path} took over ${timeoutMs} ms`));
        controller.abort();
      }, timeoutMs);
    });
    try {
      return await Promise.race([exchange(path, request, attempts), deadline]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /**
   * The exchange, within the caller's deadline. `attempts` > 1 sends again when the transport
   * failed with no answer at all (a pooled connection the provider had closed): only for a call
   * that is safe to repeat.
   */
  async function exchange(path: string, request: () => Request, attempts: number): Promise<Exchange> {
    let response: Response | undefined;
    for (let attempt = 1; response === undefined; attempt++) {
      try {
        response = await config.transport(request());
      } catch (e) {
        if (attempt >= attempts) throw new ProviderUnavailable(`3DS Server ${path} unreachable`, { cause: e });
      }
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel();
      throw new ProviderRefusedCredentials(`3DS Server ${path} refused the API key (${response.status})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(await response.text());
    } catch {
      json = undefined; // not JSON, or cut off
    }
    return { status: response.status, json: typeof json === 'object' && json !== null ? json : undefined };
  }

  const isErro = (json: unknown): json is ErrorMessage => (json as { messageType?: unknown }).messageType === 'Erro';

  return {
    async prepare({ acctNumber }) {
      // A preparation is safe to ask for again (an unused one expires): once more when the
      // transport failed with no answer, within the same deadline.
      const { status, json } = await withUnavailableOnDeadline(
        '/preauth',
        call('/preauth', { acctNumber }, timeouts.prepare, 2),
      );
      if (json === undefined) throw new ProviderUnavailable(`3DS Server /preauth answered ${status} with no JSON`);
      if (isErro(json)) {
        // "Unknown BIN": no DS knows the card.
        if (json.errorCode === '305' && /unknown bin/i.test(json.errorDescription)) return { kind: 'notEnrolled' };
        if (status >= 500)
          throw new ProviderUnavailable(`3DS Server /preauth: Erro ${json.errorCode} ${json.errorComponent}`);
        // The provider will not prepare this card (asking again changes nothing).
        return { kind: 'refused', erro: json };
      }
      if (status >= 500) throw new ProviderUnavailable(`3DS Server /preauth answered ${status}`);
      const crd = json as CardRangeData;
      if (typeof crd.threeDSServerTransID !== 'string' || typeof crd.acsEndProtocolVersion !== 'string') {
        throw new ProviderUnavailable('3DS Server /preauth answered no card range data');
      }
      return { kind: 'prepared', crd };
    },

    async authenticate(areq) {
      let answer: Exchange;
      try {
        answer = await call('/auth', areq, timeouts.authenticate);
      } catch (e) {
        if (e instanceof DeadlinePassed) throw new AuthenticationOutcomeUnknown(`3DS Server ${e.message}`);
        throw e;
      }
      const { status, json } = answer;
      const handled = status >= 200 && status < 300;
      if (json === undefined) {
        // A 2xx means the provider handled the AReq: what it answered is lost, and so is the AReq.
        if (handled) throw new AuthenticationOutcomeUnknown(`3DS Server /auth answered ${status} with no JSON`);
        throw new ProviderUnavailable(`3DS Server /auth answered ${status} with no JSON`);
      }
      if (isErro(json)) {
        // An error the 3DS Server found itself, before any DS saw the AReq, and not about the
        // AReq's content: the provider is failing, the AReq may be sent again.
        if (json.errorComponent === 'S' && status >= 500) {
          throw new ProviderUnavailable(`3DS Server /auth: Erro ${json.errorCode} ${json.errorComponent}`);
        }
        return { kind: 'erro', erro: json };
      }
      if (!handled) throw new ProviderUnavailable(`3DS Server /auth answered ${status}`);
      const ares = json as AuthenticationResponse;
      if (ares.messageType !== 'ARes' || typeof ares.dsTransID !== 'string' || typeof ares.acsTransID !== 'string') {
        throw new AuthenticationOutcomeUnknown('3DS Server /auth answered no ARes');
      }
      return { kind: 'ares', ares };
    },

    async result(threeDSServerTransID) {
      const { status, json } = await withUnavailableOnDeadline(
        '/postauth',
        call('/postauth', { threeDSServerTransID }, timeouts.result),
      );
      if (json === undefined) throw new ProviderUnavailable(`3DS Server /postauth answered ${status} with no JSON`);
      if (isErro(json)) {
        // "No RReq has been received" while the challenge runs; "Unknown threeDSServerTransID"
        // once the provider dropped it (300 s after it arrived).
        if (/no rreq/i.test(`${json.errorDescription} ${json.errorDetail}`)) return { kind: 'pending' };
        if (json.errorCode === '203' || json.errorCode === '301') return { kind: 'gone' };
        throw new ProviderUnavailable(`3DS Server /postauth: Erro ${json.errorCode} ${json.errorComponent}`);
      }
      if (status >= 500) throw new ProviderUnavailable(`3DS Server /postauth answered ${status}`);
      const rreq = json as ResultsRequest;
      if (rreq.messageType !== 'RReq' || typeof rreq.transStatus !== 'string') {
        throw new ProviderUnavailable('3DS Server /postauth answered no RReq');
      }
      return { kind: 'rreq', rreq };
    },
  };
}

class DeadlinePassed extends Error {}

/** A provider's answer: its status and the JSON object of its body (undefined when it is none). */
interface Exchange {
  status: number;
  json: object | undefined;
}

/** For calls that decide nothing at the provider, a passed deadline is the provider being unavailable. */
async function withUnavailableOnDeadline<T>(path: string, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (e) {
    if (e instanceof DeadlinePassed) throw new ProviderUnavailable(`3DS Server ${e.message}`);
    throw e;
  }
}
