import { visibleLeadingDigits } from '../../mask';
import { resolveCard } from '../../cards/resolve-card';
import { ok, type Result } from '../../failures';
import type { MerchantConfig } from '../../merchants/merchant-config';
import type { DeviceDataInitializeRequest } from '../../schemas/threeds-requests-v3';
import { SESSION_TTL_MS } from '../session-record';
import { PAGES, THREEDS_PATH } from '../api-paths';
import { signJwt } from '../jwt';
import { prepareCard } from '../live/live-prepare';
import { liveParts } from './live-parts';
import type { ThreeDsServer } from '../live/three-ds-server';
import type { ThreeDsTransactionApi } from '../transaction-api';
import { requestHash, threeDsCaller, type ThreeDsDeps } from './step-deps';
import { orgUnitId } from '../hmac-derived-values';

/** A DDC JWT is good for 10 minutes (docs/threeds.md "deviceDataInitialize": exp = iat + 600). */
export const DDC_JWT_LIFETIME_SECONDS = 600;

export interface DeviceDataInitialized {
  answer: Record<string, unknown>;
  /** Masked card number, for the log. */
  card?: string;
  /** Set when a different body met a transaction already initialized (its first answer is kept). */
  conflict: boolean;
  /** Live: what preparing the card at the 3DS Server provider gave, for the log. */
  prepared?: string;
}

/**
 * deviceDataInitialize (docs/threeds.md). The transaction's owner keeps the first body's answer:
 * a retry gets it back byte for byte, and so does a changed body (a collection the browser
 * already made stays tied to this transaction; a different card wants a new reference).
 */
export async function deviceDataInitialize(
  deps: ThreeDsDeps,
  merchant: MerchantConfig,
  request: DeviceDataInitializeRequest,
): Promise<Result<DeviceDataInitialized>> {
  const called = threeDsCaller(merchant, request.merchant.entity, request.transactionReference);
  if (!called.ok) return called;
  const caller = called.value;
  const live = deps.environment === 'live' ? liveParts(deps, caller.entity) : undefined;
  let bin: string | undefined;
  let masked: string | undefined;
  let cardNumber: string | undefined;
  if (request.paymentInstrument) {
    const card = await resolveCard(
      deps.cards,
      { username: caller.scope.username, entity: caller.entity },
      request.paymentInstrument,
      { hrefPath: '$.paymentInstrument.href' },
    );
    if (!card.ok) return card;
    masked = card.value.masked;
    cardNumber = card.value.cardNumber;
    // The BIN is as much of the number as a mask may show: a number under 15 digits keeps its
    // first 6 to itself, so that at least 5 digits stay hidden (src/mask.ts).
    if (visibleLeadingDigits(card.value.cardNumber.length) === 6) bin = card.value.bin;
  }
  const hash = await requestHash(deps.key, request);
  const { owner, id } = deps.transactionFor(caller.scope);
  const ddc = await signJwt(
    deps.key,
    'ddc',
    {
      OrgUnitId: await orgUnitId(deps.key, caller.scope),
      txn: id,
    },
    DDC_JWT_LIFETIME_SECONDS,
    deps.now,
  );
  const answer = {
    outcome: 'initialized',
    transactionReference: request.transactionReference,
    deviceDataCollection: { jwt: ddc.jwt, url: `${deps.baseUrl}${PAGES.ddc}`, ...(bin ? { bin } : {}) },
    _links: { '3ds:authenticate': { href: `${deps.baseUrl}${THREEDS_PATH}/authenticate` } },
  };
  const claim = await owner.initialize(hash, { answer, ddcJti: ddc.jti }, deps.now, deps.now + SESSION_TTL_MS);
  // Live: the request whose answer was kept prepares its card, before answering, so that the DDC
  // page finds the 3DS Method to run.
  const prepared =
    live && cardNumber !== undefined && claim.answer.ddcJti === ddc.jti
      ? await prepareAhead(deps, owner, live.provider, cardNumber)
      : undefined;
  return ok({
    answer: claim.answer.answer,
    conflict: claim.conflict,
    ...(masked ? { card: masked } : {}),
    ...(prepared ? { prepared } : {}),
  });
}

/**
 * Prepares the card for authenticate (docs/threeds.md "Live": "Preparing the card"). A failure
 * here costs nothing but the 3DS Method: authenticate prepares the card itself when it finds it
 * unprepared, so the answer stands and the log says what happened.
 */
async function prepareAhead(
  deps: ThreeDsDeps,
  owner: ThreeDsTransactionApi,
  provider: ThreeDsServer,
  cardNumber: string,
): Promise<string> {
  try {
    const prepared = await owner.livePrepared(
      await prepareCard(deps.key, provider, cardNumber, deps.baseUrl),
      false,
      Date.now(),
    );
    return prepared.kind === 'prepared'
      ? `prepared ${prepared.version}${prepared.methodUrl ? ' with a 3DS Method' : ''}`
      : prepared.kind === 'unsupported'
        ? prepared.why
        : 'not enrolled';
  } catch (e) {
    return `not prepared: ${e instanceof Error ? e.message : String(e)}`;
  }
}
