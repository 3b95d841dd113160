import { fetchableUntil, fetchRReq, noResultAnswer } from '../live/live-challenge-result';
import type { FetchedResult, LiveChallenge, LiveResult, LiveVerified } from '../live/live-state';
import { providerMissing, type ThreeDsServer } from '../live/three-ds-server';
import type { LiveTransaction } from './live-transaction';

/**
 * A live challenge's one result, fetched by its transaction's object (docs/threeds.md "Live":
 * "The result of a challenge"): the RReq, asked of the 3DS Server provider here when the
 * notification page or `verification` needs it (the watch asks too, when nobody does:
 * live-watch.ts), and recorded once. One fetch at a time: callers who arrive while one is under
 * way share it, so 20 verifications at once ask the provider once. Nothing is kept but the result:
 * a fetch lost with its instance is simply asked again.
 */

export class LiveResults {
  /** The fetch under way in this instance, by challenge reference. */
  private readonly fetching = new Map<string, Promise<FetchedResult>>();

  constructor(
    private readonly live: LiveTransaction,
    private readonly provider: () => ThreeDsServer | undefined,
  ) {}

  /**
   * The challenge's result for the notification page: the recorded one, else the RReq fetched now
   * (briefly again while the provider does not have it yet). Throws when the provider cannot be
   * asked; `undecided` when it has none yet (verification will ask again).
   */
  async fetched(reference: string, baseUrl: string): Promise<FetchedResult | undefined> {
    const open = this.open(reference);
    if (!open) return undefined;
    if (open.result) return { kind: 'decided', result: open.result };
    return this.fetchOnce(open.challenge, baseUrl, Date.now());
  }

  /**
   * verification's result: the recorded one; else the RReq while the provider may still hold it;
   * else `pending` while a decoupled authentication's issuer may still answer; else (none there, or
   * too late) `authenticationFailed`, not completed (decoupled: `unavailable`), recorded, so that
   * every later call repeats it. Undefined when `reference` is not the transaction's live
   * challenge. A provider that cannot be asked throws (a 503 for the caller) and records nothing.
   */
  async verified(reference: string, now: number, baseUrl: string): Promise<LiveVerified | undefined> {
    const open = this.open(reference);
    if (!open) return undefined;
    if (open.result) return open.result;
    const { challenge } = open;
    if (now < fetchableUntil(challenge)) {
      const fetched = await this.fetchOnce(challenge, baseUrl, now);
      if (fetched.kind === 'decided') return fetched.result;
    }
    // Decoupled, the issuer may still answer: what authenticate answered (`decoupled`), again.
    const asked = challenge.decoupled && now < challenge.decoupled.expiresAt && this.live.authentication()?.answer;
    if (asked) return { kind: 'pending', answer: asked };
    const answer = noResultAnswer({ baseUrl }, challenge);
    // Undefined only when the session ended in between: the answer is given, nothing is kept.
    return this.live.decide(reference, answer, Date.now()) ?? { answer, decidedAt: Date.now() };
  }

  private open(reference: string): { challenge: LiveChallenge; result?: LiveResult } | undefined {
    const known = this.live.challenge();
    return known?.challenge.reference === reference ? known : undefined;
  }

  /** The fetch under way for the challenge, or a new one; the first answer recorded stays. */
  private fetchOnce(challenge: LiveChallenge, baseUrl: string, now: number): Promise<FetchedResult> {
    const reference = challenge.reference;
    let fetch = this.fetching.get(reference);
    if (!fetch) {
      fetch = this.fetchAndRecord(challenge, baseUrl, now).finally(() => this.fetching.delete(reference));
      this.fetching.set(reference, fetch);
    }
    return fetch;
  }

  private async fetchAndRecord(challenge: LiveChallenge, baseUrl: string, now: number): Promise<FetchedResult> {
    const provider = this.provider();
    if (!provider) throw providerMissing();
    const fetched = await fetchRReq(provider, challenge, baseUrl, now);
    if (fetched.kind === 'undecided') return fetched;
    // In the same synchronous block as the answer's arrival: recorded once, whoever asked.
    const result = this.live.decide(challenge.reference, fetched.answer, Date.now());
    // Undefined only when the session ended in between: the challenge is gone with it.
    return result ? { kind: 'decided', result } : { kind: 'undecided', why: 'gone' };
  }
}
