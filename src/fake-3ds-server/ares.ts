import type { EmvVersion } from '../emv/emv-rules';
import { challengeRequired, frictionlessResult } from './acs-results';
import type { AuthenticationResponse } from './messages';
import type { Scenario } from './scenarios';
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
  const head = {
    messageType: 'ARes' as const,
    messageVersion: p.version,
    threeDSServerTransID: p.threeDSServerTransID,
    acsTransID: p.acsTransID,
    dsTransID: p.dsTransID,
    acsReferenceNumber: ACS_REFERENCE_NUMBER,
    dsReferenceNumber: DS_REFERENCE_NUMBER,
    acsOperatorID: ACS_OPERATOR_ID,
  };
  const outcome = p.scenario.ares;
  if (outcome === 'dsTimeout') throw new Error('a DS that times out sends no ARes');
  if (outcome === 'C') {
    return {
      ...head,
      ...challengeRequired(p.version),
      acsURL: acsChallengeUrl(p.origin),
      acsChallengeMandated: 'Y',
    };
  }
  return { ...head, ...frictionlessResult(outcome, p.version, p.acctNumber, p.cavv) };
}
