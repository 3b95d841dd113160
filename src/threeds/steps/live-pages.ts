import { fromBase64Url, toBase64Url, utf8 } from '../../bytes';
import type { ThreeDsTransactionApi } from '../transaction-api';
import { challengePage, type LiveChallenge } from '../live/live-state';
import { PAGES } from '../api-paths';
import { DDC_REFUSED, ddcOf } from './device-data-collection';
import { pageError as error, type PageAnswer } from './page-answer';
import type { ThreeDsDeps } from './step-deps';
import type { BrowserFacts } from '../live/areq-builder';
import { objectIdOfHandle, transactionHandle } from '../live/handles';
import { normaliseLanguageTag } from '../live/language-tags';
import { DDC_PAGE_GIVES_UP_MS, methodIndicator } from '../live/timing';
import { providerMissing } from '../live/three-ds-server';

/**
 * The steps behind the live browser pages (docs/threeds.md "Live": "Pages"): the DDC page that
 * runs the issuer's 3DS Method and records the browser's facts, the method's notification, the
 * challenge relay to the issuer's ACS and the challenge's end. Like the test pages they hold no
 * state: a signed JWT or a transaction handle names the owner object, which decides.
 */

/** The owner a handle names, or undefined when this service did not issue the handle. */
async function transactionOfHandle(deps: ThreeDsDeps, handle: string): Promise<ThreeDsTransactionApi | undefined> {
  const id = await objectIdOfHandle(deps.key, handle);
  return id === undefined ? undefined : deps.transactionById(id);
}

/**
 * What the DDC page's request says of the browser: the languages it accepts (by preference, each
 * made a BCP 47 tag as {@link normaliseLanguageTag} does, the others and repeats left out) and
 * its IP address. The user agent and Accept header come from the merchant's authenticate.
 */
export function headerFacts(headers: Headers): BrowserFacts {
  const tags = (headers.get('Accept-Language') ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((x) => x !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .map(({ tag, q, index }) => ({ tag: normaliseLanguageTag(tag), q, index }))
    .filter((t): t is { tag: string; q: number; index: number } => t.q > 0 && t.tag !== undefined)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map(({ tag }) => tag)
    .filter((tag, i, all) => all.indexOf(tag) === i)
    .slice(0, 99);
  const ip = headers.get('CF-Connecting-IP') ?? undefined;
  return { ...(tags.length > 0 ? { acceptLanguage: tags } : {}), ...(ip ? { ip } : {}) };
}

/**
 * What the DDC page's script posts: each fact kept only when it is what a browser reports (a
 * value out of range is left out, not the whole post), so that authenticate can rely on them.
 */
export function scriptFacts(posted: unknown): BrowserFacts {
  if (typeof posted !== 'object' || posted === null) return {};
  const p = posted as Record<string, unknown>;
  const int = (value: unknown, min: number, max: number): number | undefined =>
    Number.isInteger(value) && (value as number) >= min && (value as number) <= max ? (value as number) : undefined;
  const facts: BrowserFacts = {
    javascriptEnabled: p.javascriptEnabled === true ? true : undefined,
    javaEnabled: typeof p.javaEnabled === 'boolean' ? p.javaEnabled : undefined,
    // navigator.language, made a BCP 47 tag where it plainly names one (`en-US@posix`: en-US).
    language: normaliseLanguageTag(p.language),
    colorDepth: int(p.colorDepth, 1, 99),
    screenHeight: int(p.screenHeight, 1, 999_999),
    screenWidth: int(p.screenWidth, 1, 999_999),
    // Minutes from UTC, as getTimezoneOffset() gives them: -14 h to +12 h.
    timeZone: int(p.timeZone, -840, 720),
  };
  return Object.fromEntries(Object.entries(facts).filter(([, v]) => v !== undefined));
}

/**
 * `POST /3ds/ddc` in `live`: records the collection and the header facts (once per DDC JWT, as in
 * `test`), and answers the page that runs the 3DS Method while its 10 s are not over.
 */
export async function collectDeviceDataLive(deps: ThreeDsDeps, jwt: string, headers: Headers): Promise<PageAnswer> {
  const ddc = await ddcOf(deps, jwt);
  if (!ddc) return DDC_REFUSED;
  const collected = await ddc.owner.liveCollect(ddc.jti, ddc.sessionId, deps.now, { ...headerFacts(headers) });
  if (collected.kind === 'unknown') return DDC_REFUSED;
  const handle = await transactionHandle(deps.key, ddc.objectId);
  const { prepared, method } = collected;
  // The method runs (its iframe is shown) while authenticate would still wait for it.
  const running =
    prepared?.kind === 'prepared' && method !== undefined && methodIndicator(method, deps.now).kind === 'wait';
  return {
    kind: 'liveDdc',
    ddc: {
      message: { MessageType: 'profile.completed', SessionId: collected.sessionId, Status: true },
      factsUrl: `${deps.baseUrl}${PAGES.ddcFacts}/${handle}`,
      givesUpMs: DDC_PAGE_GIVES_UP_MS,
      ...(running
        ? {
            method: {
              url: method.url!,
              data: toBase64Url(
                utf8(
                  JSON.stringify({
                    threeDSServerTransID: prepared.threeDSServerTransID,
                    threeDSMethodNotificationURL: `${deps.baseUrl}${PAGES.methodNotification}/${handle}`,
                  }),
                ),
              ),
            },
          }
        : {}),
    },
  };
}

/** `POST /3ds/ddc/facts/<handle>`: the DDC page's script's facts. False for a handle not ours. */
export async function recordBrowserFacts(deps: ThreeDsDeps, handle: string, posted: unknown): Promise<boolean> {
  const owner = await transactionOfHandle(deps, handle);
  if (!owner) return false;
  await owner.liveAddFacts({ ...scriptFacts(posted) }, deps.now);
  return true;
}

/**
 * `POST /3ds/method/<handle>`: the ACS's 3DS Method notification. What it posts
 * (`threeDSMethodData`) is not trusted and not needed: the handle names the transaction.
 */
export async function methodCompleted(deps: ThreeDsDeps, handle: string): Promise<PageAnswer> {
  const owner = await transactionOfHandle(deps, handle);
  if (!owner) return error(404, '3-D Secure', 'This page is not known.');
  await owner.liveMethodCompleted(deps.now);
  return { kind: 'methodNotified' };
}

/**
 * `POST /3ds/challenge` in `live`, once the challenge JWT is verified: the owner marks it shown
 * (with the merchant's MD), and the page posts the CReq to the issuer's ACS with the
 * transaction's handle as `threeDSSessionData`.
 */
export async function relayChallenge(
  deps: ThreeDsDeps,
  owner: ThreeDsTransactionApi,
  objectId: string,
  reference: string,
  jti: string,
  md: string,
): Promise<PageAnswer> {
  const shown = await owner.liveShow(reference, jti, md, deps.now);
  switch (shown.kind) {
    case 'shown':
      return {
        kind: 'relay',
        acsUrl: shown.page.acsURL,
        creq: shown.page.creq,
        sessionData: await transactionHandle(deps.key, objectId),
      };
    case 'used':
      return error(409, 'This challenge was already used', 'Go back to the shop and try the payment again.');
    case 'ended':
      return error(409, 'This challenge is already complete', 'Go back to the shop to finish the payment.');
    case 'unknown':
      return error(400, 'Cannot show this challenge', 'The challenge request is not valid.');
  }
}

/**
 * `POST /3ds/challenge/notify/<handle>`: the ACS's final post (`cres`) says the challenge ended.
 * The result is the RReq, which the transaction's object fetches from the provider (briefly again
 * while it is not there yet) and records once; then the page returns to the merchant, as in
 * `test`. A result not known yet (or a provider or object that cannot be asked) still returns:
 * verification will fetch it.
 */
export async function challengeEnded(deps: ThreeDsDeps, handle: string, cres: string): Promise<PageAnswer> {
  const owner = await transactionOfHandle(deps, handle);
  if (!owner) return error(404, 'Cannot finish this challenge', 'This challenge is not known.');
  const known = await owner.liveChallenge(deps.now);
  if (!known) return error(400, 'Cannot finish this challenge', 'This challenge no longer exists.');
  const { challenge } = known;
  // Only a browser's challenge returns through this page (an app's or a decoupled one has none).
  const page = challengePage(challenge);
  if (!page) return error(400, 'Cannot finish this challenge', 'This challenge has no page.');
  let result = known.result;
  let note = cresNote(cres, challenge);
  if (!result) {
    if (!deps.provider) throw providerMissing();
    try {
      const fetched = await owner.liveFetched(challenge.reference, deps.now, deps.baseUrl);
      if (fetched?.kind === 'decided') result = fetched.result;
      else note = [note, `result ${fetched?.why ?? 'gone'}`].filter(Boolean).join('; ');
    } catch (e) {
      // The merchant's verification asks again; the cardholder goes back to the shop now.
      note = [note, `result not fetched: ${e instanceof Error ? e.message : String(e)}`].filter(Boolean).join('; ');
    }
  }
  const outcome = result?.answer.outcome;
  return {
    kind: 'completed',
    returnUrl: page.returnUrl,
    transactionId: challenge.reference,
    md: known.md,
    result: outcome === undefined ? 'pending' : outcome === 'authenticated' ? 'passed' : 'failed',
    ...(note ? { note } : {}),
  };
}

/** What the log should know of a `cres` that is not this transaction's final CRes (it decides nothing). */
function cresNote(cres: string, challenge: LiveChallenge): string | undefined {
  try {
    const parsed = JSON.parse(
      new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(fromBase64Url(cres)),
    ) as Record<string, unknown>;
    if (parsed.messageType === 'CRes' && parsed.acsTransID === challenge.acsTransID) return undefined;
    return 'cres is not a CRes of this transaction';
  } catch {
    return 'cres is not base64url JSON';
  }
}
