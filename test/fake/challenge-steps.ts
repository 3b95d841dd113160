import { expect } from 'vitest';
import type { EmvVersion } from '../../src/emv/emv-rules';
import {
  base64UrlJson,
  decodeCres,
  expectAres,
  NOTIFICATION_URL,
  ORIGIN,
  pageForm,
  postForm,
  prepareAndAuthenticate,
  submitsItself,
  type Json,
} from './fake-client';

/** The steps of a challenge as a browser takes them, for the tests of the fake's ACS. */

/** The CReq a requestor builds from an ARes: base64url without padding, unless asked. */
export function creqFor(ares: Json, overrides: Json = {}, padded = false): string {
  return base64UrlJson(
    {
      threeDSServerTransID: ares.threeDSServerTransID,
      acsTransID: ares.acsTransID,
      messageVersion: ares.messageVersion,
      messageType: 'CReq',
      challengeWindowSize: '05',
      ...overrides,
    },
    padded,
  );
}

/** A card prepared and authenticated to an ARes C. */
export async function challenged(card: string, version: EmvVersion): Promise<{ crd: Json; ares: Json }> {
  const { crd, answer } = await prepareAndAuthenticate(card, version);
  const ares = expectAres(answer);
  expect(ares.transStatus).toBe('C');
  return { crd, ares };
}

/** The browser posts the CReq to acsURL. */
export function openChallenge(ares: Json, threeDSSessionData = 'c2Vzc2lvbi0x', creq = creqFor(ares)) {
  expect(ares.acsURL).toBe(`${ORIGIN}/acs/challenge`);
  return postForm(ares.acsURL as string, { creq, threeDSSessionData });
}

/** The browser follows a page that submits itself to the fake's own origin. */
export function followAutoPost(html: string) {
  expect(submitsItself(html)).toBe(true);
  const { action, fields } = pageForm(html);
  expect(action.startsWith(ORIGIN)).toBe(true);
  return postForm(action, fields);
}

/** The manual challenge page submitted with a code, or cancelled. */
export function submitCode(html: string, action: 'submit' | 'cancel', code = '') {
  const form = pageForm(html);
  return postForm(form.action, { ...form.fields, action, code });
}

/** The page that ends a challenge: it posts cres (checked) and threeDSSessionData to the notificationURL. */
export function expectEndPage(html: string, version: EmvVersion): { cres: Json; threeDSSessionData?: string } {
  expect(submitsItself(html)).toBe(true);
  const { action, fields } = pageForm(html);
  expect(action).toBe(NOTIFICATION_URL);
  const cres = decodeCres(fields['cres']!, version);
  return {
    cres,
    ...(fields['threeDSSessionData'] !== undefined ? { threeDSSessionData: fields['threeDSSessionData'] } : {}),
  };
}
