import type { Brand } from '../../bin/model';
import { toBase64Url, utf8 } from '../../bytes';
import { failedCall, type FailedCall } from '../../storage/object-client';
import { FailureError } from '../../failures';
import { PAGES, THREEDS_PATH } from '../api-paths';
import { newChallengeReference, WINDOW_CODES } from '../challenge';
import { challengedAnswer } from '../challenged-answer';
import { buildAReq } from '../live/areq-builder';
import { byChannel, type BrowserAuthenticateRequest } from '../app-channel-rules';
import { appChallengeOf } from '../live/live-app-challenge';
import { exemptionResult, type ExemptionAsked } from '../exemptions';
import { decoupledAnswer, withExemption } from '../outcomes';
import { answerForEmvResult, notEnrolledAnswer, unavailableAnswer, type AnswerContext } from '../live/emv-outcomes';
import type { AuthenticationRequest, AuthenticationResponse, EmvVersion, ErrorMessage } from '../live/emv-messages';
import { transactionHandle } from '../live/handles';
import {
  challengeBase,
  type LiveChallenge,
  type LiveRun,
  type MethodRecord,
  type PreparedCard,
} from '../live/live-state';
import { cardHashOf, prepareCard } from '../live/live-prepare';
import {
  AuthenticationOutcomeUnknown,
  ProviderRefusedCredentials,
  ProviderUnavailable,
  providerMissing,
  type ThreeDsServer,
} from '../live/three-ds-server';
import { CHALLENGE_START_WINDOW_MS, methodIndicator, needsPreparing } from '../live/timing';
import { DS_UNREACHABLE } from '../live/stored-answer';
import type { LiveAuthenticateInput, LiveAuthenticated } from '../transaction-api';
import type { LiveTransaction } from './live-transaction';

/**
 * authenticate in `live`, inside the transaction's object (docs/threeds.md "Live":
 * "authenticate: one AReq per transaction, ever"). The Worker validates the request and passes it
 * with the card (in memory: the card number is never stored); the object prepares the card again
 * if needed, waits out the 3DS Method, sends the AReq and records the answer, in one run. An
 * identical request arriving meanwhile waits on that run in memory (the object's, not a lease);
 * another body is a conflict.
 *
 * Before the AReq goes out the run marks it sent, in storage: from then on, whatever fails, it is
 * never sent again. A run that fails before that point leaves nothing behind (the caller answers
 * 503; its retry runs again). An answer that cannot be had once the AReq went out (the provider's
 * deadline passed) makes the transaction `unavailable` for good. An object reset in the middle
 * loses the run in memory: the next identical request (or the object's alarm) finds the AReq
 * marked sent by an instance that is gone, and answers `unavailable` at once; one reset before
 * the mark runs again from the start.
 */

/** What a run reaches outside the object's storage. */
export interface LiveHost {
  live: LiveTransaction;
  /** The 3DS Server provider, or undefined when this deployment has none (a misconfiguration). */
  provider(): ThreeDsServer | undefined;
  /** JWT_SIGNING_KEY: the challenge JWT, the transaction handle, the card's keyed hash. */
  key: Uint8Array<ArrayBuffer>;
  /** The object's id (the page JWTs and handles name it). */
  objectId: string;
  /**
   * The AReq is marked sent: the object sets its alarm to the end of the answer window, so that a
   * reset before the answer still ends the transaction (lost) with nobody calling.
   */
  sent(): Promise<void>;
}

/** One run of authenticate: the answer it recorded (or `lost`), or the AReq it could not build. */
export async function runLiveAuthentication(
  host: LiveHost,
  input: LiveAuthenticateInput,
  begun: LiveRun,
): Promise<LiveAuthenticated> {
  const { live, key } = host;
  const provider = host.provider();
  if (!provider) {
    live.abandon();
    throw providerMissing();
  }
  const { request, card, baseUrl } = input;
  const context: AnswerContext = {
    transactionReference: request.transactionReference,
    brands: card.brands,
    step: 'authenticate',
    apiBase: `${baseUrl}${THREEDS_PATH}`,
  };
  const answered = (answer: object, scenario: string, challenge?: LiveChallenge): LiveAuthenticated => {
    const recorded = live.complete({ ...answer }, Date.now(), challenge, input.series);
    return { kind: 'answered', answer: recorded ?? { ...unavailableAnswer(context) }, scenario };
  };

  let sent = false;
  try {
    const cardHash = await cardHashOf(key, card.cardNumber);
    const { prepared, method } = await preparedFor(host, provider, input, cardHash, begun);
    if (prepared.kind !== 'prepared') {
      const answer = prepared.kind === 'notEnrolled' ? notEnrolledAnswer(context) : unavailableAnswer(context);
      return answered(answer, `live: ${prepared.kind === 'unsupported' ? prepared.why : 'not enrolled'}`);
    }
    const channel = byChannel(request);
    const built = buildAReq({
      version: prepared.version as EmvVersion,
      threeDSServerTransID: prepared.threeDSServerTransID,
      now: Date.now(),
      card,
      requestor: input.requestor,
      // An app has no 3DS Method and no notification page: its SDK talks to the ACS.
      ...('app' in channel
        ? { channel: 'app', request: channel.app }
        : {
            channel: 'browser',
            request: channel.browser,
            threeDSCompInd: await methodOutcome(live, method),
            notificationURL: `${baseUrl}${PAGES.challengeNotification}/${await transactionHandle(key, host.objectId)}`,
            browser: begun.facts,
          }),
    });
    if (!built.ok) {
      live.abandon();
      return { kind: 'invalid', errors: built.errors };
    }
    // From here the AReq may reach the DS: it is never sent again.
    sent = true;
    const result = await sendAReq(host, provider, built.areq, context, 'live');
    if (result.kind === 'lost') {
      live.lose(Date.now());
      return { kind: 'answered', answer: result.answer, scenario: result.scenario };
    }
    if (result.kind === 'final') return answered(result.answer, result.scenario);
    const ares = result.ares;
    if (ares.transStatus === 'C' && 'app' in channel) {
      const started = appChallengeOf({ request: channel.app, baseUrl, brands: card.brands }, ares, Date.now());
      const exemption = built.exemption;
      // A challenge: the issuer did not grant the exemption (the challenge's result says it again).
      if (started)
        return answered(withExemption(started.answer, exemption && exemptionResult(exemption, ares)), 'live: C (app)', {
          ...started.challenge,
          ...(exemption ? { exemption } : {}),
        });
    } else if (ares.transStatus === 'C' && 'browser' in channel && isWebUrl(ares.acsURL)) {
      const { answer, challenge } = await challengeOf(host, input, channel.browser, ares, built.exemption);
      return answered(answer, 'live: C', challenge);
    }
    // D only when the request allowed it: an unrequested D stays `unavailable` (EMV outcomes).
    if (ares.transStatus === 'D' && request.decoupled) {
      const { answer, challenge } = decoupledOf(input, ares, built.exemption);
      return answered(answer, 'live: D', challenge);
    }
    return answered(
      answerForEmvResult(ares, context, built.exemption),
      `live: ${ares.transStatus ?? 'no transStatus'}`,
    );
  } catch (e) {
    // Before the AReq was sent (or it never reached the provider): leave nothing behind. After: it
    // was sent and is never sent again.
    if (sent && !neverReached(e)) live.lose(Date.now());
    else live.abandon();
    throw e;
  }
}

/** Whether a failed AReq call never reached the provider: nothing happened, the next request sends it. */
export function neverReached(e: unknown): boolean {
  return e instanceof ProviderUnavailable || e instanceof ProviderRefusedCredentials;
}

/** What sending an AReq gave, as a run records it. */
export type SentAReq =
  | { kind: 'ares'; ares: AuthenticationResponse }
  /** An Erro: the final answer (`unavailable`, marked when the Directory Server was unreachable). */
  | { kind: 'final'; answer: Record<string, unknown>; scenario: string }
  /** The answer is unknown (past the deadline): `unavailable` for good; the run records the loss. */
  | { kind: 'lost'; answer: Record<string, unknown>; scenario: string };

/**
 * Sends a built AReq (authenticate's or a 3RI's), marked sent first: from then on it is never sent
 * again. Throws what never reached the provider ({@link neverReached}), and the rest as it came.
 */
export async function sendAReq(
  host: LiveHost,
  provider: ThreeDsServer,
  areq: AuthenticationRequest,
  context: AnswerContext,
  label: string,
): Promise<SentAReq> {
  host.live.sending(Date.now());
  await host.sent();
  let outcome: Awaited<ReturnType<typeof provider.authenticate>>;
  try {
    outcome = await provider.authenticate(areq);
  } catch (e) {
    if (!(e instanceof AuthenticationOutcomeUnknown)) throw e;
    return {
      kind: 'lost',
      answer: { ...unavailableAnswer(context) },
      scenario: `${label}: AReq sent, its answer unknown`,
    };
  }
  if (outcome.kind === 'erro') {
    const { errorCode, errorComponent } = outcome.erro;
    const outage = dsUnreachable(outcome.erro);
    const unavailable = { ...unavailableAnswer(context) };
    return {
      kind: 'final',
      answer: outage ? { ...unavailable, [DS_UNREACHABLE]: true } : unavailable,
      scenario: `${label}: Erro ${errorCode} from ${errorComponent}${outage ? ' (DS unreachable)' : ''}`,
    };
  }
  return { kind: 'ares', ares: outcome.ares };
}

/**
 * Whether the provider's Erro to the AReq says the Directory Server could not be reached: EMV
 * error 405 (system connection failure) from the DS, or from the 3DS Server naming the Directory
 * Server ("Unable to contact Directory Server"). The only Erro after which the service can say
 * that the card schemes' 3-D Secure is down: any other Erro is about this transaction.
 */
export function dsUnreachable(erro: ErrorMessage): boolean {
  if (erro.errorCode !== '405') return false;
  return erro.errorComponent === 'D' || /directory server/i.test(`${erro.errorDescription} ${erro.errorDetail}`);
}

/**
 * The card's preparation: deviceDataInitialize's when it is for this card and under 70 s old,
 * else a new one (whose 3DS Method then never ran: the browser ran the old one's, if any).
 */
export async function preparedFor(
  host: LiveHost,
  provider: ThreeDsServer,
  input: { card: { cardNumber: string }; baseUrl: string },
  cardHash: string,
  begun: LiveRun,
): Promise<{ prepared: PreparedCard; method: MethodRecord }> {
  const known = begun.prepared;
  if (known && known.cardHash === cardHash && !needsPreparing(known.preparedAt, Date.now())) {
    return { prepared: known, method: begun.method };
  }
  const fresh = await prepareCard(host.key, provider, input.card.cardNumber, input.baseUrl);
  const prepared = host.live.storePrepared(fresh, true);
  return { prepared, method: prepared.kind === 'prepared' && prepared.methodUrl ? { url: prepared.methodUrl } : {} };
}

/** threeDSCompInd, once a 3DS Method still running has had the rest of its 10 s. */
async function methodOutcome(live: LiveTransaction, method: MethodRecord): Promise<'Y' | 'N' | 'U'> {
  let indicator = methodIndicator(method, Date.now());
  if (indicator.kind === 'wait') {
    const awaited = await live.awaitMethod(Date.now() + indicator.ms);
    indicator = methodIndicator(awaited, Date.now());
  }
  // A wait that ended a hair early (clocks) is a method that did not complete in time.
  return indicator.kind === 'indicator' ? indicator.value : 'N';
}

/**
 * The `challenged` answer and the challenge the object keeps: the challenge page relays the CReq
 * (base64url, no padding) to the ACS; the JWT expires 30 s after the ARes, as the ACS refuses a
 * later CReq.
 */
/**
 * An ARes D (docs/threeds.md "Decoupled"): the issuer authenticates the cardholder out of band
 * until the time the request allowed; `decoupled` is the answer, and the RReq, fetched by this
 * object, the result. Nothing to show, so no CReq and no page.
 */
function decoupledOf(
  input: LiveAuthenticateInput,
  ares: AuthenticationResponse,
  exemption: ExemptionAsked | undefined,
): { answer: Record<string, unknown>; challenge: LiveChallenge } {
  const { request, card, baseUrl } = input;
  const aresAt = Date.now();
  const reference = newChallengeReference();
  const expiresAt = aresAt + request.decoupled!.maxMinutes * 60_000;
  const answer = decoupledAnswer({
    transactionReference: request.transactionReference,
    version: ares.messageVersion,
    reference,
    expiresAt,
    apiBase: `${baseUrl}${THREEDS_PATH}`,
  });
  return {
    answer: { ...withExemption(answer, exemption && exemptionResult(exemption, ares)) },
    challenge: {
      ...challengeBase(ares, {
        reference,
        transactionReference: request.transactionReference,
        aresAt,
        brands: card.brands,
      }),
      ...(exemption ? { exemption } : {}),
      decoupled: { expiresAt },
    },
  };
}

async function challengeOf(
  host: LiveHost,
  input: LiveAuthenticateInput,
  request: BrowserAuthenticateRequest,
  ares: AuthenticationResponse,
  exemption: ExemptionAsked | undefined,
): Promise<{ answer: Record<string, unknown>; challenge: LiveChallenge }> {
  const { card } = input;
  const aresAt = Date.now();
  const reference = newChallengeReference();
  const creq = toBase64Url(
    utf8(
      JSON.stringify({
        threeDSServerTransID: ares.threeDSServerTransID,
        acsTransID: ares.acsTransID,
        messageVersion: ares.messageVersion,
        messageType: 'CReq',
        challengeWindowSize: WINDOW_CODES[request.challenge.windowSize] ?? '02',
      }),
    ),
  );
  const acsURL = ares.acsURL!;
  return {
    // A challenge: the issuer did not grant the exemption (the challenge's result says it again).
    answer: withExemption(
      await challengedAnswer({ key: host.key, baseUrl: input.baseUrl }, input.scope, {
        transactionReference: request.transactionReference,
        returnUrl: request.challenge.returnUrl,
        acsUrl: acsURL,
        payload: creq,
        reference,
        version: ares.messageVersion,
        objectId: host.objectId,
        ttlMs: CHALLENGE_START_WINDOW_MS,
        issuedAt: aresAt,
      }),
      exemption && exemptionResult(exemption, ares),
    ),
    challenge: {
      ...challengeBase(ares, {
        reference,
        transactionReference: request.transactionReference,
        aresAt,
        brands: card.brands,
      }),
      acsURL,
      creq,
      returnUrl: request.challenge.returnUrl,
      ...(exemption ? { exemption } : {}),
    },
  };
}

/** An ACS URL the browser can be sent to: absolute http(s). */
function isWebUrl(value: string | undefined): value is string {
  if (value === undefined) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * The object's side of a run (its expiry, its alarm) around the run's work; either may answer a
 * domain failure as a value (src/storage/object-client.ts).
 */
type Changing = (
  work: (onStart: () => void) => Promise<LiveAuthenticated | FailedCall>,
) => Promise<LiveAuthenticated | FailedCall>;

/**
 * Live authenticate's runs in one object instance: the first body starts its run, an identical
 * body waits on it, another body is a conflict (LiveTransaction.start decides from storage; the
 * run in memory is this instance's own). `instance` tells this instance's start from one left by
 * an instance that is gone (the object was reset).
 */
export class LiveRuns {
  private readonly instance = crypto.randomUUID();
  private readonly runs = new Map<string, Promise<LiveAuthenticated | FailedCall>>();

  constructor(
    private readonly live: LiveTransaction,
    private readonly host: () => LiveHost,
  ) {}

  /** Whether a run is under way in this instance. */
  get running(): boolean {
    return this.runs.size > 0;
  }

  /**
   * The answer to `input`: an identical run's under way, the recorded one, or a new run's.
   * `changing` wraps the object's side of it (its expiry, its alarm); `onStart` runs in the same
   * synchronous block as the run's start.
   */
  authenticate(input: LiveAuthenticateInput, changing: Changing): Promise<LiveAuthenticated | FailedCall> {
    return this.run(input, lostAnswer(input), changing, (begun) => runLiveAuthentication(this.host(), input, begun));
  }

  /**
   * One authentication of this transaction (authenticate's, or a 3RI's: three-ri-run.ts): the
   * first body starts `work` (the run; its start and its first synchronous steps in one block), an
   * identical body waits on it or gets its recorded answer, another body is a conflict. `lost` is
   * the answer when an AReq went out with its answer unknown.
   */
  run(
    input: { requestHash: string; now: number },
    lost: Record<string, unknown>,
    changing: Changing,
    work: (begun: LiveRun) => Promise<LiveAuthenticated>,
  ): Promise<LiveAuthenticated | FailedCall> {
    const running = this.runs.get(input.requestHash);
    if (running) return running;
    return changing((onStart) => {
      const begun = this.live.start(input.requestHash, this.instance, input.now);
      switch (begun.kind) {
        case 'answered':
          return Promise.resolve({ kind: 'answered', answer: begun.answer, scenario: 'live: answered before' });
        case 'conflict':
          return Promise.resolve({ kind: 'conflict' });
        case 'lost':
          return Promise.resolve({ kind: 'answered', answer: lost, scenario: 'live: AReq sent, its answer unknown' });
        case 'running':
          // Another body's run is a conflict; this body's is in `runs`.
          return this.runs.get(input.requestHash) ?? Promise.resolve({ kind: 'conflict' });
      }
      onStart();
      const run = work(begun)
        .catch((e: unknown) => {
          // A domain failure goes back as a value (src/storage/object-client.ts), as the token object's.
          if (e instanceof FailureError) return failedCall(e);
          throw e;
        })
        .finally(() => {
          this.runs.delete(input.requestHash);
        });
      this.runs.set(input.requestHash, run);
      return run;
    });
  }

  /** The alarm: an AReq sent by an instance that is gone (or past its answer window) is lost. */
  loseIfOrphaned(now: number): void {
    this.live.loseIfOrphaned(this.instance, now);
  }
}

/** The answer to a live authentication (or 3RI) whose AReq went out with its answer unknown. */
export function lostAnswer(input: {
  request: { transactionReference: string };
  card: { brands: readonly Brand[] };
  baseUrl: string;
}): Record<string, unknown> {
  return {
    ...unavailableAnswer({
      transactionReference: input.request.transactionReference,
      brands: input.card.brands,
      step: 'authenticate',
      apiBase: `${input.baseUrl}${THREEDS_PATH}`,
    }),
  };
}
