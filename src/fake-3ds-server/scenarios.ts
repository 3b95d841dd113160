import type { EmvVersion } from '../emv/emv-rules';

/**
 * The fake 3DS Server's scenarios, chosen by the card number's last four digits as 3dsecure.io's
 * sandbox chooses them (research notes §1.10), extended where the service has cases the sandbox
 * lacks (marked "extension"). Data first; the few functions below only read it.
 *
 * | digit | position | values |
 * |---|---|---|
 * | 1 | versions offered | {@link VERSION_OFFERS} |
 * | 2 | 3DS Method | {@link METHOD_BEHAVIOURS} |
 * | 3 | ARes | {@link ARES_OUTCOMES} |
 * | 4 | challenge (only when digit 3 is 7) | {@link CHALLENGE_FLOWS} |
 *
 * The sandbox writes its frictionless cards with a 3 in the fourth place (`…2003`); the fake
 * takes any fourth digit there. Digits outside the tables, and transStatus I on a card that only
 * speaks 2.1.0, are outside the grid: /preauth answers Erro 305 "Transaction data not valid".
 */

export interface VersionOffer {
  summary: string;
  /** What the ACS supports, oldest first: its start and end versions, each listed in acsProtocolVersions. */
  acs: readonly EmvVersion[];
  /** The Directory Server's range, oldest first. */
  ds: readonly EmvVersion[];
  /** Each ACS version has a 3DS Method URL of its own (acsProtocolVersions), so a requestor must take the chosen version's. */
  methodUrlPerVersion: boolean;
}

const ALL: readonly EmvVersion[] = ['2.1.0', '2.2.0', '2.3.1'];

/** Digit 1: the versions the card range offers. */
export const VERSION_OFFERS: Readonly<Record<string, VersionOffer>> = {
  '0': { summary: 'ACS and DS 2.1.0–2.3.1', acs: ALL, ds: ALL, methodUrlPerVersion: false },
  '1': { summary: '2.1.0 only', acs: ['2.1.0'], ds: ['2.1.0'], methodUrlPerVersion: false },
  '2': { summary: '2.2.0 only', acs: ['2.2.0'], ds: ['2.2.0'], methodUrlPerVersion: false },
  '3': { summary: '2.3.1 only', acs: ['2.3.1'], ds: ['2.3.1'], methodUrlPerVersion: false },
  '4': {
    summary: 'extension: ACS 2.1.0–2.2.0, DS 2.1.0–2.3.1 (the requestor must pick 2.2.0)',
    acs: ['2.1.0', '2.2.0'],
    ds: ALL,
    methodUrlPerVersion: false,
  },
  '5': {
    summary: 'extension: ACS 2.2.0–2.3.1, DS 2.1.0–2.3.1 (no 2.1.0)',
    acs: ['2.2.0', '2.3.1'],
    ds: ALL,
    methodUrlPerVersion: false,
  },
  '6': {
    summary: 'extension: ACS 2.2.0 and 2.3.1, each with its own 3DS Method URL; DS 2.1.0–2.3.1',
    acs: ['2.2.0', '2.3.1'],
    ds: ALL,
    methodUrlPerVersion: true,
  },
};

export type MethodBehaviour = 'completes' | 'none' | 'timeout';

/** Digit 2: the ACS's 3DS Method. */
export const METHOD_BEHAVIOURS: Readonly<Record<string, { behaviour: MethodBehaviour; summary: string }>> = {
  '0': { behaviour: 'completes', summary: 'a method URL; the method completes (notifies the requestor)' },
  '1': { behaviour: 'none', summary: 'no method URL' },
  '2': { behaviour: 'timeout', summary: 'a method URL; the method never completes' },
};

export type AResOutcome = 'Y' | 'N' | 'A' | 'R' | 'I' | 'U' | 'dsTimeout' | 'C' | 'grants' | 'refuses';

/** Digit 3: what the AReq gets. */
export const ARES_OUTCOMES: Readonly<Record<string, { outcome: AResOutcome; summary: string }>> = {
  '0': { outcome: 'Y', summary: 'frictionless Y (eci 05, Mastercard 02; a CAVV)' },
  '1': { outcome: 'N', summary: 'frictionless N (reason 01)' },
  '2': { outcome: 'A', summary: 'attempted A (eci 06, Mastercard 01; a CAVV)' },
  '3': { outcome: 'R', summary: 'rejected R (reason 11)' },
  '4': { outcome: 'I', summary: 'informational I, 2.2.0 and later (eci 07, Mastercard 00; 2.3.1 exemption 05)' },
  '5': { outcome: 'U', summary: 'unavailable U (reason 22; 14 in 2.1.0, which has no 22)' },
  '6': { outcome: 'dsTimeout', summary: 'the DS times out: Erro 405' },
  '7': { outcome: 'C', summary: 'challenge C (digit 4 says how it goes)' },
  '8': {
    outcome: 'grants',
    summary:
      'extension: grants the exemption the AReq asks for (threeDSRequestorChallengeInd 05, 07, 08, 10, 11): I, with transChallengeExemption naming it in 2.3.1; data only (06, or message category 80): U reason 80 (Mastercard ECI 04); no exemption asked: Y',
  },
  '9': {
    outcome: 'refuses',
    summary:
      'extension: refuses the exemption the AReq asks for: challenge C (digit 4 says how it goes); none asked: Y',
  },
};

export type ChallengeFlow =
  | 'autoPass'
  | 'autoFail'
  | 'manual'
  | 'manualLateRReq'
  | 'manualExpiredRReq'
  | 'decoupledPass'
  | 'decoupledFail'
  | 'decoupledNever';

/** The decoupled flows: an ARes D when the AReq allows it (threeDSRequestorDecReqInd Y, 2.2.0+). */
export const DECOUPLED_FLOWS: readonly ChallengeFlow[] = ['decoupledPass', 'decoupledFail', 'decoupledNever'];

/** When the ACS's RReq of a decoupled authentication arrives: this long after the ARes (the fake's clock). */
export const DECOUPLED_RREQ_MS = 3_000;

/** Digit 4, with digit 3 = 7: how the challenge goes. */
export const CHALLENGE_FLOWS: Readonly<Record<string, { flow: ChallengeFlow; summary: string }>> = {
  '0': { flow: 'autoPass', summary: 'the page submits itself: Y' },
  '1': { flow: 'autoFail', summary: 'the page submits itself: N (reason 01)' },
  '2': { flow: 'manual', summary: 'a one-time code (1234 passes; three wrong codes fail; Cancel fails)' },
  '3': {
    flow: 'manualLateRReq',
    summary: 'extension: manual, and the RReq arrives late (the first 2 /postauth after the end answer "No RReq")',
  },
  '4': {
    flow: 'manualExpiredRReq',
    summary: 'extension: manual, and the RReq has already expired (/postauth answers 203)',
  },
  '5': {
    flow: 'decoupledPass',
    summary:
      'extension: decoupled when the AReq allows it (ARes D, acsDecConInd Y), its RReq Y 3 s after the ARes; else as 2',
  },
  '6': {
    flow: 'decoupledFail',
    summary: 'extension: decoupled when the AReq allows it, its RReq N (reason 01) 3 s after the ARes; else as 2',
  },
  '7': { flow: 'decoupledNever', summary: 'extension: decoupled when the AReq allows it, no RReq ever; else as 2' },
};

/** A card number starting with these digits is known to no DS (the sandbox's generic "not enrolled" card). */
export const NOT_ENROLLED_PREFIX = '9000';

/** How many /postauth calls after the end of a late-RReq challenge still answer "No RReq". */
export const LATE_RREQ_POSTAUTHS = 2;

export interface Scenario {
  /** The card number's last four digits. */
  code: string;
  versions: VersionOffer;
  method: MethodBehaviour;
  ares: AResOutcome;
  /** Only when `ares` is C (or `refuses`). */
  challenge?: ChallengeFlow;
}

/**
 * The scenario of a card number, or undefined when its last four digits are outside the grid.
 *
 * @example
 * ```ts
 * scenarioFor('4000100511112003'); // { code: '2003', versions: 2.2.0 only, method: 'completes', ares: 'Y' }
 * ```
 */
export function scenarioFor(acctNumber: string): Scenario | undefined {
  const code = acctNumber.slice(-4);
  const [d1 = '', d2 = '', d3 = '', d4 = ''] = code;
  const versions = VERSION_OFFERS[d1];
  const method = METHOD_BEHAVIOURS[d2]?.behaviour;
  const ares = ARES_OUTCOMES[d3]?.outcome;
  if (!versions || !method || !ares) return undefined;
  if (ares === 'I' && !versions.acs.some((v) => v !== '2.1.0')) return undefined;
  if (ares !== 'C' && ares !== 'refuses') return { code, versions, method, ares };
  const challenge = CHALLENGE_FLOWS[d4]?.flow;
  return challenge ? { code, versions, method, ares, challenge } : undefined;
}

/**
 * The versions an AReq for this scenario may use: those both the ACS and the DS support; never
 * 2.1.0 for transStatus I, which 2.1.0 does not have.
 */
export function usableVersions(scenario: Scenario): EmvVersion[] {
  return scenario.versions.acs.filter(
    (v) => scenario.versions.ds.includes(v) && !(scenario.ares === 'I' && v === '2.1.0'),
  );
}

/** The card scheme the fake's DS plays, by the card number's first digits. */
export function schemeFor(acctNumber: string): 'visa' | 'mastercard' | 'amex' | 'standin' {
  if (acctNumber.startsWith('4')) return 'visa';
  if (isMastercard(acctNumber)) return 'mastercard';
  if (/^3[47]/.test(acctNumber)) return 'amex';
  return 'standin';
}

/** Mastercard's ECIs differ from the other schemes' (02 / 01 / 00 rather than 05 / 06 / 07). */
export function isMastercard(acctNumber: string): boolean {
  return /^[25]/.test(acctNumber);
}
