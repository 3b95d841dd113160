import type { Brand } from '../../bin/model';
import {
  dataOnlyFor,
  eciFor,
  unavailableFor,
  withExemption,
  type Authentication,
  type ThreeDsAnswer,
} from '../outcomes';
import { exemptionResult, type ExemptionAsked } from '../exemptions';
import type { AuthenticationResponse, ResultsRequest } from './emv-messages';

/**
 * The answer to the merchant for an EMV result (docs/threeds.md "Live"): an ARes of a frictionless
 * authentication, or the RReq of a challenge, in Worldpay's shape. One pure mapping:
 *
 * | transStatus | outcome | status | enrolled | eci, authenticationValue |
 * |---|---|---|---|---|
 * | Y | authenticated | Y | Y | the issuer's, as given |
 * | A | authenticated | A | Y | the issuer's (attempted) |
 * | I (exemption acknowledged) | authenticated | I | Y | the issuer's; a value only if given |
 * | N, R | authenticationFailed | N / R | Y | the issuer's, else 07 (00 Mastercard, Maestro); no value |
 * | U, D, anything else | unavailable | U | U | none |
 *
 * A live answer never invents an `eci` or an `authenticationValue` for Y, A or I.
 * `authentication.transactionId` is the DS transaction id, `acsTransactionId` the ACS's.
 */

export interface AnswerContext {
  transactionReference: string;
  brands: readonly Brand[];
  step: 'authenticate' | 'verification';
  /** Base of the `_links`: `{base}/verifications/customers/3ds`. */
  apiBase: string;
}

/** What an ARes and an RReq share, as the answer reads it. */
type EmvResult = Pick<
  AuthenticationResponse | ResultsRequest,
  'messageVersion' | 'acsTransID' | 'dsTransID' | 'transStatusReason' | 'eci' | 'authenticationValue'
> & { transStatus?: string; challengeCancel?: string; transChallengeExemption?: string };

/**
 * The answer for a final EMV result (any transStatus but C), with the exemption's result when
 * one was asked for (exemptions.ts): a data-only answer is `unavailable` with `dataOnly: true`.
 */
export function answerForEmvResult(result: EmvResult, c: AnswerContext, asked?: ExemptionAsked): ThreeDsAnswer {
  if (!asked) return answerOf(result, c);
  const exemption = exemptionResult(asked, result);
  const answer = asked.requested === 'dataOnly' && exemption.applied ? dataOnlyFor(c) : answerOf(result, c);
  return withExemption(answer, exemption);
}

function answerOf(result: EmvResult, c: AnswerContext): ThreeDsAnswer {
  const head = { transactionReference: c.transactionReference };
  const detail = {
    ...(result.transStatusReason !== undefined ? { statusReason: result.transStatusReason } : {}),
    ...(result.challengeCancel !== undefined ? { cancellationIndicator: result.challengeCancel } : {}),
    ...(result.transChallengeExemption !== undefined ? { exemption: result.transChallengeExemption } : {}),
  };
  const authenticateLink = { '3ds:authenticate': { href: `${c.apiBase}/authenticate` } };
  switch (result.transStatus) {
    case 'Y':
    case 'A':
    case 'I': {
      const authentication: Authentication = {
        version: result.messageVersion,
        ...(result.eci !== undefined ? { eci: result.eci } : {}),
        ...(result.authenticationValue !== undefined ? { authenticationValue: result.authenticationValue } : {}),
        transactionId: result.dsTransID,
        ...detail,
      };
      return {
        outcome: 'authenticated',
        ...head,
        acsTransactionId: result.acsTransID,
        status: result.transStatus,
        enrolled: 'Y',
        authentication,
      };
    }
    case 'N':
    case 'R':
      return {
        outcome: 'authenticationFailed',
        ...head,
        acsTransactionId: result.acsTransID,
        status: result.transStatus,
        enrolled: 'Y',
        authentication: {
          version: result.messageVersion,
          eci: result.eci ?? eciFor(c.brands, 'none'),
          transactionId: result.dsTransID,
          ...detail,
        },
        _links: authenticateLink,
      };
    default:
      return unavailableAnswer(c);
  }
}

/**
 * `unavailable`: the issuer could not authenticate (U, D), an EMV error once the AReq was sent,
 * the DS timing out, or nothing known of a challenge's result.
 */
export function unavailableAnswer(c: AnswerContext): ThreeDsAnswer {
  return unavailableFor(c);
}

/**
 * `notEnrolled`: no Directory Server knows the card (the provider's "Unknown BIN"), so no
 * protocol version was agreed and nothing was authenticated.
 */
export function notEnrolledAnswer(c: AnswerContext): ThreeDsAnswer {
  return { outcome: 'notEnrolled', transactionReference: c.transactionReference, enrolled: 'N' };
}
