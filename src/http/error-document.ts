import type { Failure } from '../failures';

/**
 * The wire form of every {@link Failure} (docs/errors.md): status, error document and extra
 * headers, in one exhaustive switch, so that adding a failure kind without mapping it fails to
 * compile. The JSON APIs send the document; the HTML pages take the status, the headers and the
 * message from it too.
 */

export interface ErrorDocument {
  errorName: string;
  message: string;
  [extra: string]: unknown;
}

export interface MappedError {
  status: number;
  body: ErrorDocument;
  headers: Record<string, string>;
}

export const AUTH_REALM = 'card-edge';
const AUTHENTICATE = { 'WWW-Authenticate': `Basic realm="${AUTH_REALM}", charset="UTF-8"` };

/** The wire form of a failure: status, error document and any extra headers. */
export function mapFailure(f: Failure): MappedError {
  const doc = (status: number, errorName: string, message: string, extra: object = {}, headers = {}): MappedError => ({
    status,
    body: { errorName, message, ...extra },
    headers,
  });
  switch (f.kind) {
    case 'resourceNotFound':
      return doc(404, 'resourceNotFound', 'No resource exists at this path.');
    case 'methodNotAllowed':
      return doc(
        405,
        'methodNotAllowed',
        `Use ${f.allowed.join(' or ')} on this resource.`,
        { allowedMethods: f.allowed },
        { Allow: f.allowed.join(', ') },
      );
    case 'authorizationMissing':
      return doc(
        401,
        'headerIsMissing',
        'Send HTTP Basic credentials in the Authorization header.',
        { headerName: 'Authorization' },
        AUTHENTICATE,
      );
    case 'authorizationMalformed':
      return doc(
        401,
        'headerHasInvalidValue',
        'The Authorization header must be "Basic " followed by base64 of username:password.',
        { headerName: 'Authorization' },
        AUTHENTICATE,
      );
    case 'accessDenied':
      return doc(401, 'accessDenied', 'The credentials were not accepted.', {}, AUTHENTICATE);
    case 'publishableKeyNotAllowed':
      return doc(
        401,
        'accessDenied',
        'A publishable key may call only POST /api/cardBin/binLookup; send HTTP Basic credentials.',
        {},
        AUTHENTICATE,
      );
    case 'originNotAllowed':
      return doc(403, 'originIsNotAllowed', 'This origin is not listed for the publishable key.');
    case 'tooManyRequests':
      return doc(
        429,
        'tooManyRequests',
        f.what === 'lookups'
          ? 'Too many lookups with this key; try again later.'
          : f.what === 'simulated'
            ? 'Too many requests (simulated by WP-Sandbox-Simulate); try again later.'
            : 'Too many failed logins; try again later.',
        {},
        { 'Retry-After': String(f.retryAfter) },
      );
    case 'headerMissing':
      return doc(400, 'headerIsMissing', `The ${f.header} header is required.`, { headerName: f.header });
    case 'headerInvalid':
      return doc(f.status, 'headerHasInvalidValue', `The ${f.header} header must be ${f.expected}.`, {
        headerName: f.header,
      });
    case 'bodyTooLarge':
      return doc(413, 'bodyIsTooLarge', `The body must not exceed ${f.limitBytes} bytes.`);
    case 'bodyEmpty':
      return doc(400, 'bodyIsEmpty', 'The request body must not be empty.');
    case 'bodyNotJson':
      return doc(400, 'bodyIsNotJson', 'The request body must be a JSON object.');
    case 'bodyIncomplete':
      return doc(400, 'bodyIsNotJson', 'The request body ended before it was complete; send it again.');
    case 'bodyDoesNotMatchSchema':
      return doc(400, 'bodyDoesNotMatchSchema', 'The request body does not match the schema; see validationErrors.', {
        validationErrors: f.errors,
      });
    case 'urlContainsInvalidValue':
      return doc(400, 'urlContainsInvalidValue', 'The URL contains invalid values; see validationErrors.', {
        validationErrors: f.errors,
      });
    case 'entityNotConfigured':
      return doc(400, 'entityIsNotConfigured', 'The merchant entity is not configured for these credentials.');
    case 'merchantNotConfigured':
      return doc(400, 'merchantIsNotConfigured', `The merchant entity is not configured for ${f.feature}.`);
    case 'paymentInstrumentNotSupported':
      return doc(400, 'paymentInstrumentIsNotSupported', 'This card brand is not configured for the merchant entity.');
    case 'currencyNotSupported':
      return doc(
        400,
        'currencyIsNotSupported',
        `The currency ${f.currency} is not configured for the merchant entity.`,
      );
    case 'underlyingPaymentInstrumentExpired':
      return doc(400, 'underlyingPaymentInstrumentHasExpired', 'The card behind this token has expired.');
    case 'binNotFound':
      return doc(404, 'binNotFound', 'No BIN data or card scheme matches this card number.');
    case 'unrecognizedCardBrand':
      return doc(422, 'unrecognizedCardBrand', 'The card brand is not recognized.');
    case 'tokenNotFound':
      return doc(404, 'tokenNotFound', 'No such token exists for this merchant.');
    case 'maximumUpdatesExceeded':
      return doc(
        429,
        'maximumUpdatesExceeded',
        'Maximum number of updates for this token exceeded: 50 in any 30 days.',
        {},
        { 'Retry-After': String(f.retryAfter) },
      );
    case 'tooManyTokensForNamespace':
      return doc(403, 'tooManyTokensForNamespace', 'Too many tokens created for this namespace: at most 16.');
    case 'tooManyEndpoints':
      return doc(409, 'tooManyEndpoints', 'This merchant has 10 event endpoints already: delete one first.');
    case 'tokenizationNotEnabled':
      // Worldpay's v3 Tokens document answers this 500 (not a business-rule 400): kept for v3 clients.
      return doc(500, 'tokenizationNotEnabled', 'Tokenization is not enabled for this merchant entity.');
    case 'sandboxNotEnabled':
      return doc(403, 'sandboxIsNotEnabled', 'Sandbox controls work in the test environment only.');
    case 'challengeNotFound':
      return doc(404, 'challengeNotFound', 'No such challenge exists for this transaction.');
    case 'transactionReferenceDuplicate':
      return doc(
        400,
        'transactionReferenceIsADuplicate',
        'This transactionReference was already authenticated with another request; use a new transactionReference.',
      );
    case 'storageUnavailable':
      return doc(
        503,
        'serviceUnavailable',
        'Storage is temporarily unavailable; retry later.',
        {},
        { 'Retry-After': '1' },
      );
    case 'misconfigured':
      return doc(
        503,
        'serviceUnavailable',
        'The service is not configured to serve this request.',
        {},
        { 'Retry-After': '60' },
      );
    case 'providerUnavailable':
      return doc(
        503,
        'serviceUnavailable',
        'The 3-D Secure service of the card schemes is temporarily unavailable; retry later.',
        {},
        { 'Retry-After': '2' },
      );
    case 'providerMisconfigured': // the service's own credentials: an internal error to the merchant
    case 'internal':
      return doc(500, 'internalErrorOccurred', 'An internal error occurred; quote WP-CorrelationId when reporting it.');
  }
}
