import { fail } from '../../http/errors';
import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import type { AuthRecord, ChallengeResultRecord } from '../../storage/threeds-store';
import { answerOf, authenticationFor, stableUuid, type ResultKind } from '../../threeds/outcomes';
import { VERIFICATION } from '../../threeds/schemas';
import { requestHash, threeDsContext } from './common';

/** How long a KV write may take to reach other locations. */
const KV_PROPAGATION_MS = 60_000;

/** `POST /verifications/customers/3ds/verification` (CONTRACT.md §6.3). */
export const verification: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(VERIFICATION, body);
    const ctx = threeDsContext(merchant, request.merchant.entity, request.transactionReference, rc);
    const hash = await requestHash(ctx.key, request);

    const earlier = await ctx.store.getVerification(ctx.scope);
    if (earlier?.requestHash === hash) return { status: 200, body: earlier.response };

    const session = await ctx.store.getAuth(ctx.scope);
    const challenge = session?.challenge;
    // Another merchant's, another transaction's or an unknown reference all look the same.
    if (!session || !challenge || challenge.reference !== request.challenge.reference) fail({ kind: 'challengeNotFound' });

    // The browser wrote the result before posting to the merchant's returnUrl, so it exists by
    // now; read from another location, it may take up to 60 s to arrive (KV is eventually
    // consistent). So a missing result is answered as not completed but not stored until the
    // challenge window has closed plus that propagation time; until then the answer's id comes
    // from the challenge, so repeating the call repeats the answer until the result arrives.
    const result = await ctx.store.getChallengeResult(challenge.reference);
    const open = result === undefined && ctx.now < challenge.expiresAt + KV_PROPAGATION_MS;
    const transactionId = open ? await stableUuid(ctx.key, `pending:${challenge.reference}`) : undefined;
    const response = answerOf(request.transactionReference, authenticationFor(resultKind(session, result), session.brands, session.version, transactionId));
    rc.log.outcome = response.outcome;
    if (!open) await ctx.store.putVerification(ctx.scope, { requestHash: hash, response, expiresAt: session.expiresAt });
    return { status: 200, body: response };
  },
};

/** A challenge completed with the right code gets its scenario's answer; anything else failed. */
function resultKind(session: AuthRecord, result: ChallengeResultRecord | undefined): ResultKind {
  if (result?.result !== 'passed') return 'authenticationFailed';
  return session.challenge!.onSuccess as ResultKind;
}
