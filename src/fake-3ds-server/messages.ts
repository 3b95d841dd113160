import type { EmvVersion } from '../emv/emv-rules';

/**
 * The EMV messages the fake sends, typed as it builds them. Field names and values are EMVCo's;
 * the field rules per version are data in src/emv/, and the tests check every message the fake
 * produces against them.
 */

export type TransStatus = 'Y' | 'N' | 'U' | 'A' | 'C' | 'D' | 'R' | 'I';

/** Card range data: the /preauth answer. */
export interface CardRangeData {
  messageType: 'CRD';
  threeDSServerTransID: string;
  acsStartProtocolVersion: EmvVersion;
  acsEndProtocolVersion: EmvVersion;
  dsStartProtocolVersion: EmvVersion;
  dsEndProtocolVersion: EmvVersion;
  threeDSMethodURL?: string;
  /** Each ACS version, with its own method URL (3dsecure.io's per-version list, since 2024-09). */
  acsProtocolVersions: { version: EmvVersion; threeDSMethodURL?: string }[];
  scheme: string;
}

export interface ErrorMessage {
  messageType: 'Erro';
  messageVersion: EmvVersion;
  threeDSServerTransID: string;
  acsTransID?: string;
  dsTransID?: string;
  errorCode: string;
  errorComponent: 'S' | 'D' | 'A';
  errorDescription: string;
  errorDetail: string;
  errorMessageType: string;
}

/** The fields an ACS decides: the same in an ARes and an RReq, where the table has them. */
export interface AuthenticationResult {
  transStatus: TransStatus;
  transStatusReason?: string;
  eci?: string;
  authenticationValue?: string;
  /** 2.1.0 and 2.2.0. */
  authenticationType?: string;
  /** 2.3.1, where it replaces authenticationType. */
  authenticationMethod?: string[];
  transChallengeExemption?: string;
  challengeCancel?: string;
}

export interface AuthenticationResponse extends Omit<AuthenticationResult, 'challengeCancel'> {
  messageType: 'ARes';
  messageVersion: EmvVersion;
  threeDSServerTransID: string;
  acsTransID: string;
  dsTransID: string;
  acsReferenceNumber: string;
  dsReferenceNumber: string;
  acsOperatorID: string;
  acsURL?: string;
  acsChallengeMandated?: 'Y' | 'N';
  /** Decoupled (transStatus D): the ACS confirms it authenticates out of band, and tells the cardholder so. */
  acsDecConInd?: 'Y' | 'N';
  cardholderInfo?: string | Record<string, unknown>;
  /** App channel (deviceChannel 01): the SDK's transaction id. */
  sdkTransID?: string;
  /** App channel, a challenge: the JWS naming the ACS's CReq URL and its ephemeral key. */
  acsSignedContent?: string;
  acsRenderingType?: { acsInterface: string; acsUiTemplate: string };
  /** App channel, 2.3.1. */
  threeDSRequestorAppURLInd?: string;
  deviceInfoRecognisedVersion?: string;
}

export interface ResultsRequest extends Omit<AuthenticationResult, 'transChallengeExemption'> {
  messageType: 'RReq';
  messageVersion: EmvVersion;
  messageCategory: '01';
  threeDSServerTransID: string;
  acsTransID: string;
  dsTransID: string;
  /** App channel: the SDK's transaction id (2.2.0 and later), how the ACS rendered the challenge. */
  sdkTransID?: string;
  acsRenderingType?: { acsInterface: string; acsUiTemplate: string };
  interactionCounter: string;
}

/** The final CRes the ACS posts through the browser. */
export interface ChallengeResponse {
  messageType: 'CRes';
  messageVersion: EmvVersion;
  threeDSServerTransID: string;
  acsTransID: string;
  transStatus: 'Y' | 'N';
}

/** The CReq the requestor posts to acsURL. */
export interface ChallengeRequest {
  messageType: 'CReq';
  messageVersion: EmvVersion;
  threeDSServerTransID: string;
  acsTransID: string;
  challengeWindowSize: string;
}
