import { PAGES, THREEDS_PATH } from './api-paths';
import { orgUnitId } from './hmac-derived-values';
import { signJwt } from './jwt';
import type { SessionScope } from './session-record';

/**
 * authenticate's `challenged` answer, in `test` and in `live` alike (docs/threeds.md
 * "Challenge"): the challenge JWT for the merchant's page, which the challenge page at `url`
 * takes; its payload names the ACS (the service's test ACS page, or the issuer's in `live`), the
 * CReq and the challenge's reference.
 */
export async function challengedAnswer(
  deps: { key: Uint8Array<ArrayBuffer>; baseUrl: string },
  scope: SessionScope,
  o: {
    transactionReference: string;
    returnUrl: string;
    /** Where the CReq goes: the ACS. */
    acsUrl: string;
    payload: string;
    reference: string;
    version: string;
    objectId: string;
    /** How long the JWT may start the challenge, from `issuedAt`. */
    ttlMs: number;
    issuedAt: number;
  },
): Promise<Record<string, unknown>> {
  const { jwt } = await signJwt(
    deps.key,
    'challenge',
    {
      OrgUnitId: await orgUnitId(deps.key, scope),
      ReturnUrl: o.returnUrl,
      Payload: { ACSUrl: o.acsUrl, Payload: o.payload, TransactionId: o.reference },
      ObjectifyPayload: true,
      txn: o.objectId,
    },
    o.ttlMs / 1000,
    o.issuedAt,
  );
  return {
    outcome: 'challenged',
    transactionReference: o.transactionReference,
    authentication: { version: o.version },
    challenge: { reference: o.reference, url: `${deps.baseUrl}${PAGES.challenge}`, jwt, payload: o.payload },
    _links: { '3ds:verify': { href: `${deps.baseUrl}${THREEDS_PATH}/verification` } },
  };
}
