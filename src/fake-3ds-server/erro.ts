import { EMV_VERSIONS, type EmvVersion } from '../emv/emv-rules';
import type { ErrorMessage } from './messages';

/**
 * EMV error messages (Erro) as the fake's 3DS Server, DS and ACS answer them. 3dsecure.io answers
 * its errors as Erro JSON, with HTTP 200 unless the server itself is failing (research notes §1.9).
 */

export type ErroCode = '101' | '102' | '201' | '203' | '301' | '305' | '403' | '405';

/** EMV's short names of the error codes the fake uses. */
const DESCRIPTIONS: Readonly<Record<ErroCode, string>> = {
  '101': 'Message received invalid',
  '102': 'Message version number not supported',
  '201': 'Required data element missing',
  '203': 'Format of one or more data elements is invalid',
  '301': 'Transaction ID not recognised',
  '305': 'Transaction data not valid',
  '403': 'Transient system failure',
  '405': 'Connection timeout',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value is a UUID string, as EMV's transaction ids are. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export interface ErroInput {
  code: ErroCode;
  /** S the 3DS Server, D the Directory Server, A the ACS. */
  component: 'S' | 'D' | 'A';
  /** Overrides EMV's name of the code where the provider words it its own way ("Unknown BIN"). */
  description?: string;
  detail: string;
  /** The message the error is about. */
  about: 'PReq' | 'AReq' | 'RReq' | 'CReq';
  /** The version of the message it answers, when that is one the fake speaks; else 2.2.0. */
  version?: unknown;
  /** The transaction's id when the request named one. */
  threeDSServerTransID?: unknown;
  acsTransID?: string;
  dsTransID?: string;
}

/**
 * An Erro. The 2.1.0 and 2.2.0 tables require a threeDSServerTransID in every Erro, so when the
 * request named none (or not a UUID), the fake names a new one, as a 3DS Server allocates an id
 * for each message it handles.
 *
 * @example
 * ```ts
 * erro({ code: '301', component: 'S', detail: 'No such transaction', about: 'AReq', threeDSServerTransID: id });
 * ```
 */
export function erro(input: ErroInput): ErrorMessage {
  const version: EmvVersion = EMV_VERSIONS.find((v) => v === input.version) ?? '2.2.0';
  return {
    messageType: 'Erro',
    messageVersion: version,
    threeDSServerTransID: isUuid(input.threeDSServerTransID) ? input.threeDSServerTransID : crypto.randomUUID(),
    ...(input.acsTransID !== undefined ? { acsTransID: input.acsTransID } : {}),
    ...(input.dsTransID !== undefined ? { dsTransID: input.dsTransID } : {}),
    errorCode: input.code,
    errorComponent: input.component,
    errorDescription: input.description ?? DESCRIPTIONS[input.code],
    errorDetail: input.detail,
    errorMessageType: input.about,
  };
}
