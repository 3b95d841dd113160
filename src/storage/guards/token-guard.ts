import { DurableObject } from 'cloudflare:workers';
import { ClaimTable, type ClaimOutcome } from './claims';

/**
 * One Durable Object per merchant card (the merchant and the keyed hash of the card number and
 * expiry date, never the number): decides which token stands for the card, so that a burst of
 * identical POST /tokens gives one token, and a conflicting one is told so. The token record
 * itself lives in KV (`token:<id>`), written under this object's single-flight lease, so an
 * answer naming a token always means the record is there.
 */

/** What the object remembers of the card's token. */
export interface TokenClaim {
  tokenId: string;
  createdAt: number;
  expiresAt: number;
}

const CLAIM = 'token';

export class TokenGuard extends DurableObject<Env> {
  private readonly claims: ClaimTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.claims = new ClaimTable(ctx.storage.sql);
  }

  /**
   * The card's live token, or `candidate` as its new one. `detailsHash` is the keyed hash of
   * what else the request asks for (name, description, expiry): the same card with other
   * details is a `conflict`.
   */
  async claim(detailsHash: string, candidate: TokenClaim, now: number): Promise<ClaimOutcome<TokenClaim>> {
    return this.claims.claim(
      CLAIM,
      detailsHash,
      candidate,
      now,
      { expiresAt: candidate.expiresAt, writesRecord: true },
      () => {
        void this.ctx.storage.setAlarm(candidate.expiresAt);
      },
    );
  }

  /** The token record is in KV. */
  recorded(detailsHash: string): void {
    this.claims.recorded(CLAIM, detailsHash);
  }

  /** Writing the token record failed: the next identical request writes it. */
  released(detailsHash: string): void {
    this.claims.released(CLAIM, detailsHash);
  }

  /** The token was deleted: the card is free for a new token. Idempotent. */
  forget(tokenId: string, now: number): void {
    if (this.claims.answerOf<TokenClaim>(CLAIM, now)?.tokenId === tokenId) this.claims.drop(CLAIM);
  }

  override alarm(): void {
    this.claims.answerOf(CLAIM, Date.now()); // drops the claim once it has expired
  }
}

export type { ClaimOutcome };
