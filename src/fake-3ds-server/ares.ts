import type { EmvVersion } from '../emv/emv-rules';
import { challengeRequired, frictionlessResult } from './acs-results';
import type { AuthenticationResponse } from './messages';
import { DECOUPLED_FLOWS, isMastercard, type Scenario } from './scenarios';
import { acsChallengeUrl } from './urls';

/** The reference numbers EMVCo assigns to the ACS and the DS; the fake's name itself. */
export const ACS_REFERENCE_NUMBER = 'fake-3ds-server-acs';
export const DS_REFERENCE_NUMBER = 'fake-3ds-server-ds';
const ACS_OPERATOR_ID = 'fake-3ds-server-acs';

export interface AResInput {
  scenario: Scenario;
  version: EmvVersion;
  threeDSServerTransID: string;
  acsTransID: string;
  dsTransID: string;
  acctNumber: string;
  /** The fake's public origin, for the acsURL. */
  origin: string;
  /** The CAVV, when the result has one. */
  cavv: string;
  /** The AReq: what it asks decides the `grants` and `refuses` scenarios. */
  areq: Record<string, unknown>;
  /** An app AReq's: the signed content of a challenge, the device information's version. */
  app?: { acsSignedContent?: string; dv?: string };
}

/** The exemption indicators an ACS may grant (06 is data only). */
const EXEMPTION_INDICATORS = ['05', '07', '08', '10', '11'];

/** What an AReq asks for: an exemption (its indicator), data only, or nothing. */
function exemptionAsked(
  areq: Record<string, unknown>,
): { kind: 'exemption'; indicator: string } | { kind: 'dataOnly' } | undefined {
  const raw = areq['threeDSRequestorChallengeInd'];
  const indicator: unknown = Array.isArray(raw) ? (raw as unknown[])[0] : raw;
  if (areq['messageCategory'] === '80' || indicator === '06') return { kind: 'dataOnly' };
  if (typeof indicator === 'string' && EXEMPTION_INDICATORS.includes(indicator))
    return { kind: 'exemption', indicator };
  return undefined;
}

/**
 * The ARes of a scenario whose DS answers (any ARes outcome but the DS timeout).
 *
 * @example
 * ```ts
 * authenticationResponse({ scenario, version: '2.2.0', threeDSServerTransID, acsTransID, dsTransID, acctNumber, origin, cavv });
 * ```
 */
export function authenticationResponse(p: AResInput): AuthenticationResponse {
  const app = p.areq['deviceChannel'] === '01';
  const head = {
    messageType: 'ARes' as const,
    messageVersion: p.version,
    threeDSServerTransID: p.threeDSServerTransID,
    acsTransID: p.acsTransID,
    dsTransID: p.dsTransID,
    acsReferenceNumber: ACS_REFERENCE_NUMBER,
    dsReferenceNumber: DS_REFERENCE_NUMBER,
    acsOperatorID: ACS_OPERATOR_ID,
    ...(app ? appHead(p) : {}),
  };
  let outcome = p.scenario.ares;
  if (outcome === 'dsTimeout') throw new Error('a DS that times out sends no ARes');
  if (p.areq['deviceChannel'] === '03') return { ...head, ...threeRiResult(p) };
  if (outcome === 'grants' || outcome === 'refuses') {
    const asked = exemptionAsked(p.areq);
    if (asked === undefined) outcome = 'Y';
    else if (outcome === 'refuses') outcome = 'C';
    else if (asked.kind === 'dataOnly') {
      return {
        ...head,
        transStatus: 'U',
        transStatusReason: '80',
        ...(isMastercard(p.acctNumber) ? { eci: '04' } : {}),
      };
    } else {
      return {
        ...head,
        ...frictionlessResult('I', p.version, p.acctNumber, p.cavv),
        ...(p.version === '2.3.1' ? { transChallengeExemption: asked.indicator } : {}),
      };
    }
  }
  const decoupled = p.scenario.challenge !== undefined && DECOUPLED_FLOWS.includes(p.scenario.challenge);
  if (outcome === 'C' && decoupled && p.areq['threeDSRequestorDecReqInd'] === 'Y' && p.version !== '2.1.0') {
    // The ACS authenticates the cardholder out of band: the RReq comes later (postauth.ts).
    const info = 'Approve this payment in your bank’s app.';
    return {
      ...head,
      // As a challenge's (whether it is mandated, how the cardholder is authenticated), but D.
      ...challengeRequired(p.version),
      transStatus: 'D',
      acsDecConInd: 'Y',
      acsChallengeMandated: 'N',
      // 2.2.0's cardholderInfo is text; 2.3.1's an object (free-form in the rules the fake checks).
      cardholderInfo: p.version === '2.3.1' ? { cardholderInfoText: info } : info,
    };
  }
  if (outcome === 'C' && app) {
    // The SDK finds the ACS's CReq URL and key in the signed content; it renders natively, text.
    return {
      ...head,
      ...challengeRequired(p.version),
      acsChallengeMandated: 'Y',
      acsSignedContent: p.app?.acsSignedContent ?? '',
      acsRenderingType: { acsInterface: '01', acsUiTemplate: '01' },
    };
  }
  if (outcome === 'C') {
    return {
      ...head,
      ...challengeRequired(p.version),
      acsURL: acsChallengeUrl(p.origin),
      acsChallengeMandated: 'Y',
    };
  }
  return {
    ...head,
    ...frictionlessResult(outcome, p.version, p.acctNumber, p.cavv),
  };
}

/**
 * What every ARes to an app AReq carries: the SDK's transaction id; in 2.3.1, whether the ACS
 * takes the requestor's app URL (the AReq has none here) and the device information version it
 * read from `sdkEncData`.
 */
function appHead(p: AResInput): Record<string, string> {
  return {
    sdkTransID: String(p.areq['sdkTransID']),
    ...(p.version === '2.3.1'
      ? { threeDSRequestorAppURLInd: 'N', deviceInfoRecognisedVersion: p.app?.dv ?? '1.0' }
      : {}),
  };
}

/**
 * The ACS's answer to a 3RI (deviceChannel 03): never a challenge, as no cardholder is there (a
 * card whose scenario challenges, or refuses an exemption, answers N reason 01); an exemption
 * scenario answers Y, as no exemption is asked; a Mastercard recurring or instalment 3RI
 * (threeRIInd 01, 02) authenticated answers ECI 07 (Identity Check for merchant-initiated
 * payments).
 */
function threeRiResult(p: AResInput): ReturnType<typeof frictionlessResult> {
  const scenario = p.scenario.ares;
  const outcome = scenario === 'C' || scenario === 'refuses' ? 'N' : scenario === 'grants' ? 'Y' : scenario;
  if (outcome === 'dsTimeout') throw new Error('a DS that times out sends no ARes');
  const result = frictionlessResult(outcome, p.version, p.acctNumber, p.cavv);
  const inSeries = p.areq['threeRIInd'] === '01' || p.areq['threeRIInd'] === '02';
  return outcome === 'Y' && inSeries && isMastercard(p.acctNumber) ? { ...result, eci: '07' } : result;
}
