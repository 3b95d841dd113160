import { DurableObject } from 'cloudflare:workers';
import type { TokenRecord } from '../token-store';
import { ClaimTable, type ClaimOutcome } from './claims';

/**
 * One Durable Object per merchant card (the merchant and the keyed hash of the card number, never
 * the number): decides which token stands for the card, so that a burst of
 * identical POST /tokens gives one token and a request with other details is told so. The claim
 * keeps the token record as it will stand in KV (the card in it sealed), so that whoever holds
 * the write lease can write it, and an answer naming a token always means the record is there.
 */

const CLAIM = 'token';

export class TokenGuard extends DurableObject<Env> {
  private readonly claims: ClaimTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.claims = new ClaimTable(ctx.storage.sql);
  }

  /**
   * The card's live token, or `candidate` as its new one. `cardHash` is the card's keyed hash
   * (the object's own name), so every request for the card claims the same step: whether a
   * request's details differ from the token's is decided by its caller, on the token the claim
   * answers (src/tokens/token-resource.ts `conflictsOf`). A token deleted before comes back as
   * `retired`, for the caller to finish its deletion.
   */
  async claim(
    cardHash: string,
    candidate: TokenRecord,
    now: number,
    leaseId: string,
  ): Promise<ClaimOutcome<TokenRecord>> {
    let first = false;
    const outcome = await this.claims.claim(
      CLAIM,
      cardHash,
      candidate,
      now,
      { expiresAt: candidate.expiresAt, writesRecord: true, leaseId },
      () => (first = true),
    );
    if (first) await this.ctx.storage.setAlarm(candidate.expiresAt);
    return outcome;
  }

  /** The token record is in KV; false when the token was deleted meanwhile. */
  recorded(leaseId: string): boolean {
    return this.claims.recorded(CLAIM, leaseId);
  }

  /** Writing the token record failed: the next request writes it. */
  released(leaseId: string): void {
    this.claims.released(CLAIM, leaseId);
  }

  /** The token is being deleted: the card is free for a new token. Idempotent. */
  retire(tokenId: string, now: number): void {
    if (this.claims.answerOf<TokenRecord>(CLAIM, now)?.tokenId === tokenId) this.claims.retire(CLAIM);
  }

  override alarm(): void {
    this.claims.answerOf(CLAIM, Date.now()); // drops the claim once it has expired
  }
}
