/**
 * The EMV 3-D Secure 2 messages the service exchanges with a 3DS Server provider
 * (docs/threeds.md "Live"), typed as far as the service reads them. Field names and values are
 * EMVCo's; the full field rules, per version, are data in src/emv/ (the fake provider and the
 * tests check every message against them).
 */

/** The protocol versions this service speaks, oldest first. */
export const EMV_VERSIONS = ['2.1.0', '2.2.0', '2.3.1'] as const;
export type EmvVersion = (typeof EMV_VERSIONS)[number];

/** Card range data: what the provider knows of a card before authentication (its /preauth answer). */
export interface CardRangeData {
  messageType: 'CRD';
  threeDSServerTransID: string;
  acsStartProtocolVersion: string;
  acsEndProtocolVersion: string;
  dsStartProtocolVersion?: string;
  dsEndProtocolVersion?: string;
  /** The ACS's 3DS Method URL, when it has one. */
  threeDSMethodURL?: string;
  acsInfoInd?: string[];
  /** Newer providers list each ACS version with its own method URL. */
  acsProtocolVersions?: { version: string; threeDSMethodURL?: string; acsInfoInd?: string[] }[];
  dsProtocolVersions?: string[];
  scheme?: string;
}

/** An EMV error message (Erro), from the DS, the ACS or the 3DS Server. */
export interface ErrorMessage {
  messageType: 'Erro';
  messageVersion?: string;
  threeDSServerTransID?: string;
  acsTransID?: string;
  dsTransID?: string;
  errorCode: string;
  /** C SDK, S 3DS Server, D Directory Server, A ACS. */
  errorComponent: string;
  errorDescription: string;
  errorDetail: string;
  errorMessageType?: string;
}

/** The transaction status of an ARes or an RReq. */
export type TransStatus = 'Y' | 'N' | 'U' | 'A' | 'C' | 'D' | 'R' | 'I' | 'S';

/** The authentication response (ARes) to an AReq. */
export interface AuthenticationResponse {
  messageType: 'ARes';
  messageVersion: string;
  threeDSServerTransID: string;
  acsTransID: string;
  dsTransID: string;
  transStatus?: TransStatus;
  transStatusReason?: string;
  authenticationValue?: string;
  eci?: string;
  /** Where the browser posts the CReq, when transStatus is C (the browser channel). */
  acsURL?: string;
  acsReferenceNumber?: string;
  /** The app channel, transStatus C: the JWS with the ACS's CReq URL and ephemeral key, for the app's SDK. */
  acsSignedContent?: string;
  /** The app channel: the SDK's transaction id, as the AReq gave it. */
  sdkTransID?: string;
  acsChallengeMandated?: string;
  /** 2.3.1: the exemption the ACS acknowledged. */
  transChallengeExemption?: string;
}

/** The results request (RReq) the ACS sends through the DS at the end of a challenge. */
export interface ResultsRequest {
  messageType: 'RReq';
  messageVersion: string;
  threeDSServerTransID: string;
  acsTransID: string;
  dsTransID: string;
  transStatus: TransStatus;
  transStatusReason?: string;
  authenticationValue?: string;
  eci?: string;
  challengeCancel?: string;
  interactionCounter?: string;
}

/** The final challenge response (CRes) the ACS posts through the browser: it only says the challenge ended. */
export interface ChallengeResponse {
  messageType: 'CRes';
  messageVersion: string;
  threeDSServerTransID: string;
  acsTransID: string;
  transStatus?: string;
}

/** The authentication request (AReq), as src/threeds/live/areq-builder.ts builds it. */
export type AuthenticationRequest = Record<string, unknown> & {
  messageType: 'AReq';
  messageVersion: EmvVersion;
  threeDSServerTransID: string;
};
