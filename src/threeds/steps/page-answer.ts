import type { ChallengeResult } from '../challenge-rules';
import type { LiveDdc } from '../page-html';

/**
 * What a browser-page step answers: a model of the page, which the route renders
 * (src/threeds/page-html.ts). Nothing here is HTML.
 */
export type PageAnswer =
  | { kind: 'ddc'; message: { MessageType: 'profile.completed'; SessionId?: string; Status: boolean } }
  | { kind: 'form'; state: string; windowSize: string; attemptsLeft: number; wrongCode: boolean; testCode?: string }
  | {
      kind: 'completed';
      returnUrl: string;
      transactionId: string;
      md: string;
      /** `pending` (live): the issuer's result is not known yet. */
      result: ChallengeResult['outcome'] | 'pending';
      /** For the log. */
      note?: string;
    }
  /** Live: the DDC page that runs the 3DS Method. */
  | { kind: 'liveDdc'; ddc: LiveDdc }
  /** Live: the 3DS Method notification page, in the DDC page's frame. */
  | { kind: 'methodNotified' }
  /** Live: the challenge relayed to the issuer's ACS. */
  | { kind: 'relay'; acsUrl: string; creq: string; sessionData: string }
  | { kind: 'error'; status: number; title: string; detail: string };

export const pageError = (status: number, title: string, detail: string): PageAnswer => ({
  kind: 'error',
  status,
  title,
  detail,
});
