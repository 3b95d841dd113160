import type { ChallengeResult } from '../../storage/guards/challenge-rules';

/**
 * What a browser-page step answers: a model of the page, which the route renders
 * (src/threeds/page-html.ts). Nothing here is HTML.
 */
export type PageAnswer =
  | { kind: 'ddc'; message: { MessageType: 'profile.completed'; SessionId?: string; Status: boolean } }
  | { kind: 'form'; state: string; windowSize: string; attemptsLeft: number; wrongCode: boolean; testCode?: string }
  | { kind: 'completed'; returnUrl: string; transactionId: string; md: string; result: ChallengeResult['outcome'] }
  | { kind: 'error'; status: number; title: string; detail: string };

export const pageError = (status: number, title: string, detail: string): PageAnswer => ({
  kind: 'error',
  status,
  title,
  detail,
});
