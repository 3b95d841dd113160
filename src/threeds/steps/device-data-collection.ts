import { derivedUuid } from '../hmac-derived-values';
import { verifyJwt } from '../jwt';
import type { ThreeDsTransactionApi } from '../transaction-api';
import type { PageAnswer } from './page-answer';
import type { ThreeDsDeps } from './step-deps';

/**
 * `POST /3ds/ddc` (docs/threeds.md "Device data collection"), which the merchant's hidden frame
 * posts from the cardholder's browser: records the device data collection for the DDC JWT, once.
 * Posting the same JWT again answers the same SessionId and records nothing new. The JWT names
 * the transaction's owner (`txn`), which decides; the page holds no state of its own.
 */
export async function collectDeviceData(deps: ThreeDsDeps, jwt: string): Promise<PageAnswer> {
  const ddc = await ddcOf(deps, jwt);
  if (!ddc) return DDC_REFUSED;
  const collected = await ddc.owner.collect(ddc.jti, ddc.sessionId, deps.now);
  if (collected.kind === 'unknown') return DDC_REFUSED;
  return { kind: 'ddc', message: { MessageType: 'profile.completed', SessionId: collected.sessionId, Status: true } };
}

/** What the DDC page tells its parent for a JWT it cannot take. */
export const DDC_REFUSED: PageAnswer = { kind: 'ddc', message: { MessageType: 'profile.completed', Status: false } };

/**
 * A DDC JWT's transaction: its owner and id, the JWT's id, and the collection's SessionId
 * (derived from the JWT's id, so a repost answers the same one); undefined for a JWT this
 * service did not issue, or an expired one.
 */
export async function ddcOf(
  deps: ThreeDsDeps,
  jwt: string,
): Promise<{ owner: ThreeDsTransactionApi; objectId: string; jti: string; sessionId: string } | undefined> {
  const verified = await verifyJwt<{ txn?: unknown }>(deps.key, 'ddc', jwt, deps.now);
  if (!verified.ok || typeof verified.claims.txn !== 'string') return undefined;
  const owner = deps.transactionById(verified.claims.txn);
  if (!owner) return undefined;
  const jti = verified.claims.jti!;
  const sessionId = `0_${await derivedUuid(deps.key, `ddc-session:${jti}`)}`;
  return { owner, objectId: verified.claims.txn, jti, sessionId };
}
