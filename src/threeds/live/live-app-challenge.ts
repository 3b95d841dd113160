import { newChallengeReference } from '../challenge';
import { sdkChallengePayload } from '../app-challenge-payload';
import { appChallengedAnswer } from '../outcomes';
import type { AppAuthenticateRequest } from '../app-channel-rules';
import { THREEDS_PATH } from '../api-paths';
import type { AuthenticationResponse } from './emv-messages';
import { challengeBase, type LiveChallenge } from './live-state';

/**
 * An app's challenge in `live` (docs/threeds.md "The app channel"): the issuer's ARes `C` to an
 * AReq of `deviceChannel` 01 carries no `acsURL` but `acsSignedContent` (a JWS naming the ACS's
 * CReq URL and its ephemeral key, which the app's SDK checks against its Directory Server's CA),
 * with `acsReferenceNumber` and `acsTransID`: together the `challenge.payload` the app's SDK
 * takes. The SDK and the ACS then talk directly; the result is the RReq, which the transaction's
 * object fetches (transaction/live-results.ts) until the SDK's `maxTimeout` has passed and the
 * provider's retention after it.
 */

/** A compact JWS: three base64url parts. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The `challenged` answer and the challenge the object keeps; undefined when the ARes cannot
 * start an app's challenge (no signed content, no reference number, another SDK transaction's):
 * the provider's answer is then no usable challenge, and the caller answers as for any other.
 */
export function appChallengeOf(
  input: { request: AppAuthenticateRequest; baseUrl: string; brands: readonly string[] },
  ares: AuthenticationResponse,
  aresAt: number,
): { answer: Record<string, unknown>; challenge: LiveChallenge } | undefined {
  const { request, baseUrl } = input;
  const sdk = request.deviceData.sdk;
  const { acsSignedContent, acsReferenceNumber } = ares;
  if (typeof acsSignedContent !== 'string' || !COMPACT_JWS.test(acsSignedContent)) return undefined;
  if (typeof acsReferenceNumber !== 'string' || acsReferenceNumber === '') return undefined;
  if (ares.sdkTransID !== undefined && ares.sdkTransID !== sdk.transactionId) return undefined;
  const reference = newChallengeReference();
  const payload = sdkChallengePayload({
    threeDSServerTransID: ares.threeDSServerTransID,
    acsTransID: ares.acsTransID,
    acsRefNumber: acsReferenceNumber,
    acsSignedContent,
    version: ares.messageVersion,
    ...(sdk.appUrl !== undefined ? { appUrl: sdk.appUrl } : {}),
  });
  return {
    answer: appChallengedAnswer({
      transactionReference: request.transactionReference,
      version: ares.messageVersion,
      reference,
      payload,
      apiBase: `${baseUrl}${THREEDS_PATH}`,
    }),
    challenge: {
      ...challengeBase(ares, {
        reference,
        transactionReference: request.transactionReference,
        aresAt,
        brands: input.brands,
      }),
      app: { expiresAt: aresAt + sdk.maxTimeout * 60_000 },
    },
  };
}
