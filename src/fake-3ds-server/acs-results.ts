import type { EmvVersion } from '../emv/emv-rules';
import type { AuthenticationResult } from './messages';
import { isMastercard, type AResOutcome } from './scenarios';

/**
 * What the fake ACS decides, as the fields an ARes or an RReq carries: transStatus and its
 * reason, the ECI and CAVV, how the cardholder was authenticated. Pure; the CAVV is passed in.
 *
 * Codes: transStatusReason 01 card authentication failed, 11 suspected fraud, 14 timed out at
 * the ACS, 19 exceeds the ACS's maximum challenges, 22 ACS technical issue (2.2.0 and later);
 * challengeCancel 01 cardholder cancelled, 04 ACS timeout, 05 first CReq not received in time;
 * authentication 02 one-time code by SMS; transChallengeExemption 05 transaction risk analysis.
 */

/** ECIs by scheme: [others, Mastercard]. */
const ECI = { Y: ['05', '02'], A: ['06', '01'], I: ['07', '00'] } as const;

function eci(status: keyof typeof ECI, acctNumber: string): string {
  return ECI[status][isMastercard(acctNumber) ? 1 : 0];
}

/**
 * How the cardholder was authenticated: `authenticationType` up to 2.2.0, the array
 * `authenticationMethod` in 2.3.1 (whose tables have no authenticationType).
 */
function authenticatedBy(
  version: EmvVersion,
): Pick<AuthenticationResult, 'authenticationType' | 'authenticationMethod'> {
  return version === '2.3.1' ? { authenticationMethod: ['02'] } : { authenticationType: '02' };
}

/** A CAVV: 20 random bytes in base64, 28 characters, as the tables' authenticationValue. */
export function newAuthenticationValue(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(20))));
}

/** The result of a frictionless ARes (any outcome but C and the DS timeout). */
export function frictionlessResult(
  outcome: Exclude<AResOutcome, 'C' | 'dsTimeout' | 'grants' | 'refuses'>,
  version: EmvVersion,
  acctNumber: string,
  cavv: string,
): AuthenticationResult {
  // 2.3.1 requires authenticationMethod with Y and N, frictionless or not.
  const method = version === '2.3.1' ? { authenticationMethod: ['02'] } : {};
  switch (outcome) {
    case 'Y':
      return { transStatus: 'Y', eci: eci('Y', acctNumber), authenticationValue: cavv, ...method };
    case 'N':
      return { transStatus: 'N', transStatusReason: '01', ...method };
    case 'A':
      return { transStatus: 'A', eci: eci('A', acctNumber), authenticationValue: cavv };
    case 'R':
      return { transStatus: 'R', transStatusReason: '11' };
    case 'I':
      return {
        transStatus: 'I',
        eci: eci('I', acctNumber),
        ...(version === '2.3.1' ? { transChallengeExemption: '05' } : {}),
      };
    case 'U':
      // 2.1.0's reasons stop at 21.
      return { transStatus: 'U', transStatusReason: version === '2.1.0' ? '14' : '22' };
  }
}

/** The result of an ARes that asks for a challenge. */
export function challengeRequired(version: EmvVersion): AuthenticationResult {
  return { transStatus: 'C', ...authenticatedBy(version) };
}

/** How a challenge ended. */
export type ChallengeEnding = 'pass' | 'fail' | 'tooManyAttempts' | 'cancel' | 'timeout' | 'creqLate';

/** The result a challenge ending gives, for its RReq. */
export function challengeResult(
  ending: ChallengeEnding,
  version: EmvVersion,
  acctNumber: string,
  cavv: string,
): AuthenticationResult {
  const by = authenticatedBy(version);
  switch (ending) {
    case 'pass':
      return { transStatus: 'Y', eci: eci('Y', acctNumber), authenticationValue: cavv, ...by };
    case 'fail':
      return { transStatus: 'N', transStatusReason: '01', ...by };
    case 'tooManyAttempts':
      return { transStatus: 'N', transStatusReason: '19', ...by };
    case 'cancel':
      return { transStatus: 'N', transStatusReason: '01', challengeCancel: '01', ...by };
    case 'timeout':
      return { transStatus: 'N', transStatusReason: '14', challengeCancel: '04', ...by };
    case 'creqLate':
      return { transStatus: 'N', transStatusReason: '14', challengeCancel: '05', ...by };
  }
}
