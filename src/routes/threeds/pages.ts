import { readBodyText } from '../../http/body';
import { ApiError } from '../../http/errors';
import { mediaTypeOf } from '../../http/headers';
import type { RequestContext } from '../../http/pipeline';
import { StorageError } from '../../storage/kv';
import { CHALLENGE_TTL_MS, SESSION_TTL_MS, ThreeDsStore } from '../../storage/threeds-store';
import {
  challengeCode, challengeStep, MAX_CODE_ATTEMPTS, TEST_CHALLENGE_CODE, windowSizeOfPayload, type ChallengeState,
} from '../../threeds/challenge';
import { signJwt, verifyJwt } from '../../threeds/jwt';
import { challengePage, completionPage, ddcPage, errorPage, pageResponse, type Page } from '../../threeds/pages';
import { publicBaseUrl } from '../links';
import { jwtKey } from './common';

/**
 * The test ACS pages a cardholder's browser posts to (CONTRACT.md §6.4). They answer HTML,
 * errors included, and are not behind Basic auth: the signed JWTs are their credentials.
 */

interface ChallengeJwtClaims {
  ReturnUrl: string;
  Payload: { ACSUrl: string; Payload: string; TransactionId: string };
}

/** `POST /3ds/ddc` with form fields `Bin` and `JWT`. */
export function ddcRoute(rc: RequestContext): Promise<Response> {
  return page(rc, async (form, store, key) => {
    const verified = await verifyJwt(key, 'ddc', form.get('JWT') ?? '');
    if (!verified.ok) {
      rc.log.ddc = `jwt ${verified.reason}`;
      return ddcPage({ MessageType: 'profile.completed', Status: false });
    }
    const sessionId = `0_${crypto.randomUUID()}`;
    const bin = (form.get('Bin') ?? '').replace(/\D/g, '').slice(0, 6);
    const now = Date.now();
    await store.putDdc(sessionId, { ddcJti: verified.claims.jti!, ...(bin ? { bin } : {}), collectedAt: now, expiresAt: now + SESSION_TTL_MS });
    return ddcPage({ MessageType: 'profile.completed', SessionId: sessionId, Status: true });
  });
}

/** `POST /3ds/challenge` with form fields `JWT` and optional `MD` (≤ 1024). */
export function challengeRoute(rc: RequestContext): Promise<Response> {
  return page(rc, async (form, store, key) => {
    const md = form.get('MD') ?? '';
    if (md.length > 1024) return errorPage(400, 'Cannot show this challenge', 'MD must be at most 1024 characters.');
    const verified = await verifyJwt<ChallengeJwtClaims>(key, 'challenge', form.get('JWT') ?? '');
    if (!verified.ok) {
      return verified.reason === 'expired'
        ? errorPage(400, 'This challenge has expired', 'Go back to the shop and try the payment again.')
        : errorPage(400, 'Cannot show this challenge', 'The challenge request is not valid.');
    }
    const { jti, exp, ReturnUrl: returnUrl, Payload: payload } = verified.claims;
    // One use per JWT. This read-then-write has no compare-and-set (KV has none) and the "used"
    // mark reaches other locations within ~60 s: a JWT replayed elsewhere at once could show a
    // second form; the challenge result itself is still written only once (see submitRoute).
    if (await store.getChallengeJwt(jti!)) {
      return errorPage(409, 'This challenge was already used', 'Go back to the shop and try the payment again.');
    }
    await store.putChallengeJwt(jti!, { usedAt: Date.now(), expiresAt: exp! * 1000 });
    const state: ChallengeState = { ref: payload.TransactionId, attempts: 0, returnUrl, md, windowSize: windowSizeOfPayload(payload.Payload) };
    return challengeForm(rc, key, state, exp!, false);
  });
}

/** `POST /3ds/challenge/submit` with the signed `state`, `code` and `action` (submit or cancel). */
export function challengeSubmitRoute(rc: RequestContext): Promise<Response> {
  return page(rc, async (form, store, key) => {
    const verified = await verifyJwt<ChallengeState>(key, 'challenge-state', form.get('state') ?? '');
    if (!verified.ok && verified.reason === 'invalid') {
      return errorPage(400, 'Cannot complete this challenge', 'The challenge form is not valid.');
    }
    const claims = verified.claims;
    const state: ChallengeState = {
      ref: claims.ref, attempts: claims.attempts, returnUrl: claims.returnUrl, md: claims.md, windowSize: claims.windowSize,
    };
    // Written once: a replayed or double-submitted form must not turn a failure into a pass.
    // Same caveat as the JWT mark: KV offers no compare-and-set.
    if (await store.getChallengeResult(state.ref)) {
      return errorPage(409, 'This challenge is already complete', 'Go back to the shop to finish the payment.');
    }
    // Each form is good for one submission: replaying an earlier form would reset the attempt
    // count. A write-once mark per form (its jti), not a read-modify-write of a counter.
    if (await store.getChallengeState(claims.jti!)) {
      return errorPage(409, 'This form was already submitted', 'Go back to the shop and try the payment again.');
    }
    await store.putChallengeState(claims.jti!, { usedAt: Date.now(), expiresAt: Math.max(claims.exp! * 1000, Date.now()) });
    const step = verified.ok
      ? challengeStep(form.get('action') ?? 'submit', form.get('code') ?? '', await challengeCode(rc.env.ENVIRONMENT, key, state.ref), state.attempts)
      : { kind: 'failed', reason: 'expired' } as const;
    if (step.kind === 'retry') return challengeForm(rc, key, { ...state, attempts: step.attempts }, claims.exp!, true);
    const now = Date.now();
    await store.putChallengeResult(state.ref, {
      result: step.kind,
      reason: step.kind === 'passed' ? 'code' : step.reason,
      completedAt: now,
      expiresAt: now + SESSION_TTL_MS,
    });
    rc.log.challenge = step.kind === 'passed' ? 'passed' : `failed (${step.reason})`;
    return completionPage(state.returnUrl, state.ref, state.md);
  });
}

async function challengeForm(rc: RequestContext, key: Uint8Array, state: ChallengeState, exp: number, wrongCode: boolean): Promise<Page> {
  const now = Date.now();
  // The state expires with the challenge JWT: 10 minutes after authenticate at the most.
  const lifetime = Math.max(1, Math.min(exp - Math.floor(now / 1000), CHALLENGE_TTL_MS / 1000));
  // Only the state's own fields: signJwt gives every form a fresh jti, iat and exp.
  const claims: ChallengeState = { ref: state.ref, attempts: state.attempts, returnUrl: state.returnUrl, md: state.md, windowSize: state.windowSize };
  const { jwt } = await signJwt(key, 'challenge-state', { ...claims }, lifetime, now);
  return challengePage({
    submitUrl: `${publicBaseUrl(rc)}/3ds/challenge/submit`,
    state: jwt,
    windowSize: state.windowSize,
    attemptsLeft: MAX_CODE_ATTEMPTS - state.attempts,
    testCode: rc.env.ENVIRONMENT === 'test' ? TEST_CHALLENGE_CODE : undefined,
    wrongCode,
  });
}

/** Shared page plumbing: form parsing, the JWT key, and errors as HTML pages. */
async function page(
  rc: RequestContext, render: (form: URLSearchParams, store: ThreeDsStore, key: Uint8Array) => Promise<Page>,
): Promise<Response> {
  rc.log.api = 'threeDSPages';
  try {
    const contentType = mediaTypeOf(rc.request.headers.get('Content-Type') ?? '');
    if (contentType !== 'application/x-www-form-urlencoded') {
      return pageResponse(errorPage(415, 'Unsupported request', 'This page takes a form post.'));
    }
    const text = await readBodyText(rc.request);
    if (text === undefined) return pageResponse(errorPage(400, 'Unsupported request', 'The form is not UTF-8.'));
    const key = jwtKey(rc.env);
    return pageResponse(await render(new URLSearchParams(text), new ThreeDsStore(rc.env.SESSIONS), key));
  } catch (e) {
    if (e instanceof StorageError) {
      rc.log.storage = e.message;
      return pageResponse(errorPage(503, 'Please try again', 'The service is busy. Try again in a moment.'));
    }
    if (e instanceof ApiError && e.failure.kind === 'bodyTooLarge') {
      return pageResponse(errorPage(413, 'Unsupported request', 'The form is too large.'));
    }
    if (e instanceof ApiError && e.failure.kind === 'misconfigured') {
      rc.log.misconfigured = e.failure.what;
      return pageResponse(errorPage(503, 'Please try again later', 'The service is not configured.'));
    }
    throw e;
  }
}
