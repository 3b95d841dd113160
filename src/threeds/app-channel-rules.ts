import type { AuthenticateRequest } from '../schemas/threeds-requests-v3';

/**
 * Which channel an authenticate request comes through, and what each requires beyond the schema
 * (CONTRACT.md §12): a browser's request names where the challenge returns (`challenge.returnUrl`),
 * an app's has its EMV 3DS SDK's data (the schema's `deviceData` variant already requires `sdk`)
 * and needs no browser field, no return URL and no device data collection. The schema checks both.
 */

type DeviceData = AuthenticateRequest['deviceData'];

/** An app's device data: its SDK's fields. */
export type AppDeviceData = Extract<DeviceData, { channel: 'app' }>;

/** A browser's request, with what the browser channel requires present. */
export type BrowserAuthenticateRequest = AuthenticateRequest & {
  deviceData: Exclude<DeviceData, { channel: 'app' }>;
  challenge: AuthenticateRequest['challenge'] & { returnUrl: string };
};

/** An app's request. */
export type AppAuthenticateRequest = AuthenticateRequest & { deviceData: AppDeviceData };

/** Whether the request comes from an app through its SDK. */
export function isAppRequest(request: AuthenticateRequest): request is AppAuthenticateRequest {
  return request.deviceData.channel === 'app';
}

/**
 * The request by its channel. A browser's names its return URL: the schema's rule across fields
 * (`withReturnUrlRule`, src/schemas/threeds-requests.ts) refused it otherwise.
 */
export function byChannel(
  request: AuthenticateRequest,
): { app: AppAuthenticateRequest } | { browser: BrowserAuthenticateRequest } {
  return isAppRequest(request) ? { app: request } : { browser: request as BrowserAuthenticateRequest };
}
