import { derivedUuid } from '../hmac-derived-values';
import { verifyJwt } from '../jwt';
import type { PageAnswer } from './page-answer';
import type { ThreeDsDeps } from './step-deps';

/**
 * `POST /3ds/ddc` (docs/threeds.md "Device data collection"), which the merchant's hidden frame
 * posts from the cardholder's browser: records the device data collection for the DDC JWT, once.
 * Posting the same JWT again answers the same SessionId and records nothing new. The JWT names
 * the transaction's guard (`txn`), which decides; the page holds no state of its own.
 */
export async function collectDeviceData(deps: ThreeDsDeps, jwt: string): Promise<PageAnswer> {
  const refused: PageAnswer = { kind: 'ddc', message: { MessageType: 'profile.completed', Status: false } };
  const verified = await verifyJwt<{ txn?: unknown }>(deps.key, 'ddc', jwt, deps.now);
  if (!verified.ok || typeof verified.claims.txn !== 'string') return refused;
  const guard = deps.guardById(verified.claims.txn);
  if (!guard) return refused;
  const jti = verified.claims.jti!;
  const collected = await guard.collect(jti, `0_${await derivedUuid(deps.key, `ddc-session:${jti}`)}`, deps.now);
  if (collected.kind === 'unknown') return refused;
  return { kind: 'ddc', message: { MessageType: 'profile.completed', SessionId: collected.sessionId, Status: true } };
}
