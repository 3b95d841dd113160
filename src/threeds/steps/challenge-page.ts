import { mightContainCardNumber } from '../../cards/card-number-in-text';
import { MAX_CODE_ATTEMPTS } from '../challenge-rules';
import { challengeCode, judgeCode, TEST_CHALLENGE_CODE, windowSizeOfPayload } from '../challenge';
import { hmacHex } from '../hmac-derived-values';
import { signJwt, verifyJwt } from '../jwt';
import { relayChallenge } from './live-pages';
import { pageError as error, type PageAnswer } from './page-answer';
import type { ThreeDsDeps } from './step-deps';

/**
 * The steps behind the test ACS's challenge pages (docs/threeds.md "Challenge"), which a
 * cardholder's browser posts to from any Cloudflare location. They hold no state of their own:
 * each signed JWT names the transaction's owner object (`txn`), and the owner decides. They
 * answer a page model; the route renders it (src/threeds/page-html.ts).
 */

interface ChallengeJwtClaims {
  ReturnUrl: string;
  Payload: { ACSUrl: string; Payload: string; TransactionId: string };
  txn: string;
}

/** What the challenge form carries between posts: where to go, never how many codes were tried. */
interface ChallengeState {
  txn: string;
  ref: string;
  returnUrl: string;
  md: string;
  windowSize: string;
  /** This rendering of the form: a post of it again (a lost answer) is recognised, not counted again. */
  form?: string;
}

const NOT_VALID = error(400, 'Cannot show this challenge', 'The challenge request is not valid.');

/**
 * `POST /3ds/challenge`: shows the challenge from its JWT while it is open (again, when the
 * browser posts the same JWT again after a lost answer: the owner counts the codes, so a second
 * showing gives no extra attempt). In `live` it relays the challenge to the issuer's ACS instead.
 */
export async function showChallenge(deps: ThreeDsDeps, jwt: string, md: string): Promise<PageAnswer> {
  if (md.length > 1024) return error(400, 'Cannot show this challenge', 'MD must be at most 1024 characters.');
  // MD is carried through the challenge (and, live, kept while the ACS has the cardholder) and
  // posted back to the merchant: never a card number (docs/errors.md "A card number in a free-text field").
  if (mightContainCardNumber(md)) return error(400, 'Cannot show this challenge', 'MD might contain a card number.');
  const verified = await verifyJwt<ChallengeJwtClaims>(deps.key, 'challenge', jwt, deps.now);
  if (!verified.ok) {
    return verified.reason === 'expired'
      ? error(400, 'This challenge has expired', 'Go back to the shop and try the payment again.')
      : NOT_VALID;
  }
  const { jti, exp, ReturnUrl: returnUrl, Payload: payload, txn } = verified.claims;
  const owner = typeof txn === 'string' ? deps.transactionById(txn) : undefined;
  if (!owner || typeof payload?.TransactionId !== 'string' || typeof returnUrl !== 'string') return NOT_VALID;
  // Live: the issuer's ACS shows the challenge; this page relays the CReq to it.
  if (deps.environment === 'live') return relayChallenge(deps, owner, txn, payload.TransactionId, jti!, md);
  const shown = await owner.showChallenge(payload.TransactionId, jti!, deps.now);
  switch (shown.kind) {
    case 'unknown':
      return NOT_VALID;
    case 'used':
      return error(409, 'This challenge was already used', 'Go back to the shop and try the payment again.');
    case 'ended':
      return error(409, 'This challenge is already complete', 'Go back to the shop to finish the payment.');
    case 'shown': {
      const state: ChallengeState = {
        txn,
        ref: payload.TransactionId,
        returnUrl,
        md,
        windowSize: windowSizeOfPayload(payload.Payload),
      };
      // The form lives as long as the challenge JWT: 10 minutes after authenticate at the most.
      return form(deps, await formState(deps, state, exp!), state.windowSize, shown.attemptsLeft, false);
    }
  }
}

/**
 * `POST /3ds/challenge/submit`: one post of the form. The owner counts the codes and ends the
 * challenge once; every post after the end shows that one result.
 */
export async function submitChallenge(
  deps: ThreeDsDeps,
  stateJwt: string,
  action: string,
  code: string,
): Promise<PageAnswer> {
  // Live challenges are the issuer's: this service shows no form for them.
  if (deps.environment === 'live')
    return error(400, 'Cannot complete this challenge', 'The challenge form is not valid.');
  const verified = await verifyJwt<ChallengeState>(deps.key, 'challenge-state', stateJwt, deps.now);
  // An expired form is still ours: the owner ends the challenge as expired, whatever the code.
  if (!verified.ok && verified.reason === 'invalid')
    return error(400, 'Cannot complete this challenge', 'The challenge form is not valid.');
  const state = verified.claims;
  const owner = typeof state.txn === 'string' ? deps.transactionById(state.txn) : undefined;
  if (!owner) return error(400, 'Cannot complete this challenge', 'The challenge form is not valid.');
  const attempt = judgeCode(action, code, await challengeCode(deps.environment, deps.key, state.ref));
  // The same form posted again with the same code (the browser's repost after a lost answer) is
  // the same post: the object answers what it answered, and counts nothing again.
  const post =
    state.form === undefined ? undefined : await hmacHex(deps.key, `challenge-post:${state.form}:${action}:${code}`);
  const submitted = await owner.submitChallenge(state.ref, attempt, deps.now, post);
  switch (submitted.kind) {
    case 'unknown':
      return error(400, 'Cannot complete this challenge', 'This challenge no longer exists.');
    case 'retry': {
      // A new rendering of the form, as long-lived as the one posted.
      const exp = (verified.claims as { exp?: number }).exp ?? Math.floor(deps.now / 1000) + 1;
      return form(deps, await formState(deps, state, exp), state.windowSize, submitted.attemptsLeft, true);
    }
    case 'ended':
      return {
        kind: 'completed',
        returnUrl: state.returnUrl,
        transactionId: state.ref,
        md: state.md,
        result: submitted.result.outcome,
      };
  }
}

/** The signed state of one rendering of the form (a new `form` id each time), expiring at `exp` (s). */
async function formState(deps: ThreeDsDeps, state: ChallengeState, exp: number): Promise<string> {
  const lifetime = Math.max(1, exp - Math.floor(deps.now / 1000));
  const { jwt } = await signJwt(
    deps.key,
    'challenge-state',
    { ...state, form: crypto.randomUUID() },
    lifetime,
    deps.now,
  );
  return jwt;
}

function form(
  deps: ThreeDsDeps,
  state: string,
  windowSize: string,
  attemptsLeft: number,
  wrongCode: boolean,
): PageAnswer {
  return {
    kind: 'form',
    state,
    windowSize,
    attemptsLeft: Math.min(attemptsLeft, MAX_CODE_ATTEMPTS),
    wrongCode,
    ...(deps.environment === 'test' ? { testCode: TEST_CHALLENGE_CODE } : {}),
  };
}
