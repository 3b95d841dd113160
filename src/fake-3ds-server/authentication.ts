import { EMV_VERSIONS, type EmvVersion } from '../emv/emv-rules';
import { authenticationResponse } from './ares';
import { isObject } from './base64url';
import { erro } from './erro';
import { fieldFaults } from './field-check';
import type { AuthenticationResponse, ErrorMessage } from './messages';
import { scenarioFor, usableVersions } from './scenarios';
import { preparedExpired } from './time-rules';
import type { AppChallengeRecord, MethodRecord, TransactionRecord } from './transaction-record';
import { FIRST_COUNTER, type P256PublicJwk } from '../emv/secure-channel';

/**
 * POST /auth as the fake's 3DS Server, DS and ACS answer it: the checks, in the order a request
 * meets them, each answered with an Erro, then the scenario's ARes. Pure: the transaction, the
 * clock and the new ids come in; the transaction as it now stands and the answer go out.
 *
 * 1. not an AReq → 101 (S)
 * 2. no messageVersion → 201; one the fake does not speak, or outside the card's range → 102 (D)
 * 3. the AReq against its version's field rules (APP, BRW or 3RI): a missing field → 201, any other
 *    fault → 203 (D); an app's `sdkEncData` the DS key does not open, or an `sdkEphemPubKey` not on
 *    P-256 → 203 (D)
 * 4. no such prepared transaction, or prepared over 80 s ago → 301 (S)
 * 5. an AReq already accepted for it → 305 "AReq already received" (S)
 * 6. acctNumber is not the prepared card → 305 (S)
 * 7. threeDSCompInd not what the ACS saw of its method → 305 "Invalid ThreeDSCompInd" (A); a 3RI
 *    (deviceChannel 03) and an app (01) have no method and no threeDSCompInd
 * 8. a 3RI whose threeDSReqPriorRef is no acsTransID this ACS answered Y or A for the same card
 *    → 203 (A), naming the field
 * 9. the DS-timeout scenario → 405 "Connection timeout" (D)
 */

/** What the ACS knows of the authentication a 3RI names (api-routes.ts looks it up). */
export interface PriorAuthentication {
  acsTransID: string;
  acctNumber: string;
  /** Its final transStatus: the ARes's, or the RReq's after a challenge. */
  status?: string;
}

/** A 3RI's threeDSReqPriorRef (an object up to 2.2.0, a list of them in 2.3.1). */
export function priorReference(areq: Record<string, unknown>): string | undefined {
  const info = areq['threeDSRequestorPriorAuthenticationInfo'];
  const first: unknown = Array.isArray(info) ? (info as unknown[])[0] : info;
  const reference = isObject(first) ? first['threeDSReqPriorRef'] : undefined;
  return typeof reference === 'string' ? reference : undefined;
}

export type AuthAnswer = { kind: 'ares'; ares: AuthenticationResponse } | { kind: 'erro'; erro: ErrorMessage };

export interface AuthContext {
  now: number;
  origin: string;
  acsTransID: string;
  dsTransID: string;
  cavv: string;
  /** A 3RI's prior authentication as the ACS knows it (undefined: it answered no such transaction). */
  prior?: PriorAuthentication;
  /** An app AReq's (deviceChannel 01): what the DS found in its SDK fields, and the ACS's signed content. */
  app?: AppAReqFacts;
}

/** What the fake's DS and ACS made of an app AReq before the checks (their crypto is asynchronous). */
export interface AppAReqFacts {
  /** SDK fields the DS cannot use (app-keys.ts `sdkFieldFaults`). */
  invalid: string[];
  /** The device information's version, from the opened `sdkEncData`. */
  dv?: string;
  /** The ARes's `acsSignedContent`, should it ask for a challenge. */
  acsSignedContent?: string;
}

/**
 * The threeDSCompInd an AReq of `version` must carry, given what the ACS saw of its method:
 * U with no method URL; Y once the method completed (through the URL of that version, where each
 * version has its own); N when it was never invoked or never completed.
 */
export function expectedCompInd(method: MethodRecord, version: EmvVersion): { value: 'Y' | 'N' | 'U'; why: string } {
  if (!method.offered) return { value: 'U', why: 'the card range has no 3DS Method URL' };
  const invoked =
    method.invokedAt !== undefined && (method.invokedVersion === undefined || method.invokedVersion === version);
  if (!invoked) return { value: 'N', why: `the 3DS Method (of ${version}) was never invoked` };
  if (method.completedAt === undefined) return { value: 'N', why: 'the 3DS Method did not complete' };
  return { value: 'Y', why: 'the 3DS Method completed' };
}

type Checked = { ok: true; version: EmvVersion; areq: Record<string, unknown> } | { ok: false; erro: ErrorMessage };

/** Checks 1 to 7 of an AReq against the transaction it names. */
export function checkAReq(
  body: unknown,
  tx: TransactionRecord | undefined,
  now: number,
  prior?: PriorAuthentication,
  app?: AppAReqFacts,
): Checked {
  const id = isObject(body) ? body['threeDSServerTransID'] : undefined;
  const refuse = (fields: Omit<Parameters<typeof erro>[0], 'about' | 'threeDSServerTransID'>): Checked => ({
    ok: false,
    erro: erro({ ...fields, about: 'AReq', threeDSServerTransID: id }),
  });
  if (!isObject(body) || body['messageType'] !== 'AReq') {
    return refuse({ code: '101', component: 'S', detail: 'The body is not an AReq (messageType AReq)' });
  }
  const requested = body['messageVersion'];
  if (requested === undefined) return refuse({ code: '201', component: 'D', detail: 'messageVersion' });
  const version = EMV_VERSIONS.find((v) => v === requested);
  if (version === undefined) {
    return refuse({
      code: '102',
      component: 'D',
      detail: `messageVersion ${JSON.stringify(requested)} is not one of ${EMV_VERSIONS.join(', ')}`,
    });
  }
  const card = typeof body['acctNumber'] === 'string' ? scenarioFor(body['acctNumber']) : undefined;
  if (card && !usableVersions(card).includes(version)) {
    return refuse({
      code: '102',
      component: 'D',
      version,
      detail: `The card range supports ${usableVersions(card).join(', ')}, not ${version}`,
    });
  }
  const faults = fieldFaults('AReq', version, body);
  if (faults.missing.length > 0) {
    return refuse({ code: '201', component: 'D', version, detail: faults.missing.join(', ') });
  }
  if (faults.invalid.length > 0) {
    return refuse({ code: '203', component: 'D', version, detail: faults.invalid.join(', ') });
  }
  if (body['deviceChannel'] === '01' && (app === undefined || app.invalid.length > 0)) {
    return refuse({ code: '203', component: 'D', version, detail: (app?.invalid ?? ['sdkEncData']).join(', ') });
  }
  if (tx === undefined) {
    return refuse({ code: '301', component: 'S', version, detail: 'No transaction of /preauth has this id' });
  }
  if (preparedExpired(tx.preparedAt, now)) {
    return refuse({ code: '301', component: 'S', version, detail: 'The id expired 80 seconds after /preauth' });
  }
  if (tx.areq !== undefined) {
    return refuse({
      code: '305',
      component: 'S',
      version,
      description: 'AReq already received',
      detail: 'This threeDSServerTransID already carried an AReq',
    });
  }
  if (body['acctNumber'] !== tx.acctNumber) {
    return refuse({ code: '305', component: 'S', version, detail: 'acctNumber is not the card of /preauth' });
  }
  if (body['deviceChannel'] === '03') {
    const reference = priorReference(body);
    const known = prior !== undefined && prior.acsTransID === reference;
    if (!known || prior.acctNumber !== tx.acctNumber || (prior.status !== 'Y' && prior.status !== 'A')) {
      return refuse({
        code: '203',
        component: 'A',
        version,
        detail:
          'threeDSRequestorPriorAuthenticationInfo.threeDSReqPriorRef: no authentication of this card that this ACS answered Y or A',
      });
    }
    return { ok: true, version, areq: body };
  }
  if (body['deviceChannel'] === '01') return { ok: true, version, areq: body };
  const expected = expectedCompInd(tx.method, version);
  if (body['threeDSCompInd'] !== expected.value) {
    return refuse({
      code: '305',
      component: 'A',
      version,
      description: 'Invalid ThreeDSCompInd',
      detail: `The threeDSCompInd must be "${expected.value}": ${expected.why}`,
    });
  }
  return { ok: true, version, areq: body };
}

/**
 * An /auth call: the transaction as it now stands (undefined when there is none) and the answer.
 *
 * @example
 * ```ts
 * const { record, answer } = authenticate(stored, areq, { now, origin, acsTransID, dsTransID, cavv });
 * ```
 */
export function authenticate(
  stored: TransactionRecord | undefined,
  body: unknown,
  ctx: AuthContext,
): { record: TransactionRecord | undefined; answer: AuthAnswer } {
  const tx = stored && { ...stored, authCalls: stored.authCalls + 1 };
  const checked = checkAReq(body, tx, ctx.now, ctx.prior, ctx.app);
  if (!checked.ok) {
    return { record: tx && { ...tx, lastErro: checked.erro }, answer: { kind: 'erro', erro: checked.erro } };
  }
  // checkAReq accepts only an AReq of a prepared transaction, whose card is in the grid.
  const { version, areq } = checked;
  const accepted = tx!;
  const scenario = scenarioFor(accepted.acctNumber)!;
  if (scenario.ares === 'dsTimeout') {
    const timeout = erro({
      code: '405',
      component: 'D',
      description: 'Connection timeout',
      detail: 'The Directory Server did not answer within 10 seconds',
      about: 'AReq',
      version,
      threeDSServerTransID: accepted.threeDSServerTransID,
    });
    return { record: { ...accepted, areq, lastErro: timeout }, answer: { kind: 'erro', erro: timeout } };
  }
  const ares = authenticationResponse({
    scenario,
    version,
    threeDSServerTransID: accepted.threeDSServerTransID,
    acsTransID: ctx.acsTransID,
    dsTransID: ctx.dsTransID,
    acctNumber: accepted.acctNumber,
    origin: ctx.origin,
    cavv: ctx.cavv,
    areq,
    ...(ctx.app ? { app: ctx.app } : {}),
  });
  const challenge =
    ares.transStatus === 'C' || ares.transStatus === 'D' ? { challenge: { wrongCodes: 0, interactions: 0 } } : {};
  const app = ares.transStatus === 'C' && areq['deviceChannel'] === '01' ? { app: appChallengeOf(areq) } : {};
  return {
    record: { ...accepted, areq, ares, aresAt: ctx.now, ...challenge, ...app },
    answer: { kind: 'ares', ares },
  };
}

/** An app challenge's start: the SDK's fields of the AReq (checked: field rules, then sdkFieldFaults). */
function appChallengeOf(areq: Record<string, unknown>): AppChallengeRecord {
  return {
    sdkTransID: areq['sdkTransID'] as string,
    sdkEphemPubKey: areq['sdkEphemPubKey'] as P256PublicJwk,
    sdkReferenceNumber: areq['sdkReferenceNumber'] as string,
    maxTimeoutMinutes: Number(areq['sdkMaxTimeout']),
    nextSdkCounter: FIRST_COUNTER,
    nextAcsCounter: FIRST_COUNTER,
  };
}
