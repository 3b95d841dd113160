/**
 * The test magic values (docs/threeds.md "Test magic values"): in the `test` environment the cardholder name picks
 * the scenario (case-insensitive, new or legacy spelling). In `live` they are ignored.
 */

/** What authenticate answers for a scenario. */
export type AuthenticateOutcome =
  | 'authenticated'
  | 'authenticatedAttempted'
  | 'authenticationFailed'
  | 'unavailable'
  | 'challenged'
  | 'bypassed'
  | 'notEnrolled'
  /** An exemption granted (EMV `I`). */
  | 'exempted'
  /** A data-only authentication (`unavailable`, `dataOnly: true`). */
  | 'dataOnly'
  /** Decoupled (EMV `D`): the issuer authenticates out of band; `unavailable` unless the request allows it. */
  | 'decoupled';

/** What verification answers after a challenge completed with the right code. */
export type VerificationOutcome =
  'authenticated' | 'authenticatedAttempted' | 'authenticationFailed' | 'unavailable' | 'signatureFailed' | 'bypassed';

export interface Scenario {
  name: string;
  version: '2.3.1' | '2.2.0' | '1.0.2';
  authenticate: AuthenticateOutcome;
  /** Only for challenged scenarios. */
  verification?: VerificationOutcome;
  /**
   * The card schemes' 3-D Secure is down: version 3 of the API answers `authenticationOutage`,
   * versions 1 and 2 the `authenticate` outcome (`unavailable`); src/threeds/api-versions.ts.
   */
  outage?: true;
  /**
   * What the issuer does with an exemption it can read (docs/threeds.md "Exemptions"): grants it,
   * or refuses it and challenges. Without: the scenario's outcome whatever the exemption.
   */
  exemption?: 'granted' | 'refused';
  /**
   * Decoupled scenarios (docs/threeds.md "Decoupled"): the test issuer gives `verification`'s
   * result {@link testIssuer}'s time after authenticate, or never (the time runs out).
   */
  decoupled?: 'answers' | 'never';
}

/**
 * The test issuer's timing: a decoupled authentication's result comes 5 s after authenticate
 * (`decoupledAnswerMs`; a seam for the tests, which set it to 0 to have the answer due at once).
 */
export const testIssuer = { decoupledAnswerMs: 5_000 };

const S = (
  name: string,
  legacy: string,
  version: Scenario['version'],
  authenticate: AuthenticateOutcome,
  verification?: VerificationOutcome,
): [string[], Scenario] => [[name, legacy], { name, version, authenticate, verification }];

const TABLE: [string[], Scenario][] = [
  S('3ds2-frictionless-identified', '3DS_V2_FRICTIONLESS_IDENTIFIED', '2.2.0', 'authenticated'),
  S('3ds2-frictionless-not-identified', '3DS_V2_FRICTIONLESS_NOT_IDENTIFIED', '2.2.0', 'authenticatedAttempted'),
  S('3ds2-frictionless-failed', '3DS_V2_FRICTIONLESS_FAILED', '2.2.0', 'authenticationFailed'),
  S('3ds2-frictionless-rejected', '3DS_V2_FRICTIONLESS_REJECTED', '2.2.0', 'authenticationFailed'),
  S('3ds2-frictionless-unavailable', '3DS_V2_FRICTIONLESS_UNAVAILABLE', '2.2.0', 'unavailable'),
  S('3ds2-authentication-unavailable', '3DS_V2_AUTH_UNAVAILABLE', '2.2.0', 'unavailable'),
  // No legacy name: this service's scenario for Worldpay's authenticationOutage (added in 2025).
  [
    ['3ds2-authentication-outage'],
    { name: '3ds2-authentication-outage', version: '2.2.0', authenticate: 'unavailable', outage: true },
  ],
  // No legacy names: this service's scenarios for exemptions (docs/threeds.md "Exemptions"), on
  // 2.3.1, which has an indicator for each. Without an exemption, both are frictionless.
  [
    ['3ds2-exemption-granted'],
    { name: '3ds2-exemption-granted', version: '2.3.1', authenticate: 'authenticated', exemption: 'granted' },
  ],
  [
    ['3ds2-exemption-refused'],
    { name: '3ds2-exemption-refused', version: '2.3.1', authenticate: 'authenticated', exemption: 'refused' },
  ],
  S('3ds2-challenge-identified', '3DS_V2_CHALLENGE_IDENTIFIED', '2.2.0', 'challenged', 'authenticated'),
  S(
    '3ds2-challenge-unknown-identity',
    '3DS_V2_CHALLENGE_UNKNOWN_IDENTITY',
    '2.2.0',
    'challenged',
    'authenticationFailed',
  ),
  S('3ds2-verification-unavailable', '3DS_V2_CHALLENGE_UNAVAILABLE', '2.2.0', 'challenged', 'unavailable'),
  S('3ds2-bypassed', '3DS_V2_BYPASSED', '2.2.0', 'bypassed'),
  // No legacy names: this service's scenarios for decoupled authentication (EMV 2.2.0's `D`).
  ...(
    [
      ['3ds2-decoupled-authenticated', 'authenticated', 'answers'],
      ['3ds2-decoupled-failed', 'authenticationFailed', 'answers'],
      ['3ds2-decoupled-timeout', 'authenticated', 'never'],
    ] as const
  ).map(([name, verification, decoupled]): [string[], Scenario] => [
    [name],
    { name, version: '2.2.0', authenticate: 'decoupled', verification, decoupled },
  ]),
  S('3ds2-bypassed-after-challenge', '3DS_V2_BYPASSED_AFTER_CHALLENGE', '2.2.0', 'challenged', 'bypassed'),
  S('3ds1-challenge-identified', '3DS_V1_CHALLENGE_IDENTIFIED', '1.0.2', 'challenged', 'authenticated'),
  S(
    '3ds1-challenge-not-identified',
    '3DS_V1_CHALLENGE_NOT_IDENTIFIED',
    '1.0.2',
    'challenged',
    'authenticatedAttempted',
  ),
  S(
    '3ds1-challenge-unknown-identity',
    '3DS_V1_CHALLENGE_UNKNOWN_IDENTITY',
    '1.0.2',
    'challenged',
    'authenticationFailed',
  ),
  S('3ds1-invalid-signature', '3DS_V1_INVALID_SIGNATURE', '1.0.2', 'challenged', 'signatureFailed'),
  S('3ds1-verification-unavailable', '3DS_V1_CHALLENGE_AUTH_UNAVAILABLE', '1.0.2', 'challenged', 'unavailable'),
  S('3ds1-not-enrolled', '3DS_V1_NOT_ENROLLED', '1.0.2', 'notEnrolled'),
  S('3ds1-authentication-unavailable', '3DS_V1_UNAVAILABLE', '1.0.2', 'unavailable'),
  S('3ds1-bypassed', '3DS_BYPASSED', '1.0.2', 'bypassed'),
];

const BY_NAME = new Map<string, Scenario>(
  TABLE.flatMap(([names, scenario]) => names.map((n) => [n.toLowerCase(), scenario] as const)),
);

/** Every scenario, for tests, the demo and the OpenAPI document. */
export const SCENARIOS: readonly Scenario[] = TABLE.map(([, s]) => s);

/** The default for a test card with any other cardholder name. */
export const DEFAULT_SCENARIO: Scenario = BY_NAME.get('3ds2-challenge-identified')!;

/** The scenario of a name (as the owner stored it with the first body); undefined for the risk rules' decisions. */
export function scenarioNamed(name: string): Scenario | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/**
 * The scenario a cardholder name selects in `test`; undefined when there is no name or in
 * `live` (then the risk rules decide).
 */
export function scenarioFor(cardHolderName: string | undefined, environment: string): Scenario | undefined {
  if (environment !== 'test' || cardHolderName === undefined) return undefined;
  return BY_NAME.get(cardHolderName.trim().toLowerCase()) ?? DEFAULT_SCENARIO;
}
