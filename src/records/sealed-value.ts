/**
 * A value sealed with AES-256-GCM under a named key (src/cards/card-crypto.ts seals and opens
 * it): a token's card (src/records/token-record.ts) and an event endpoint's secrets
 * (src/events/endpoint-table.ts) are stored so. Below every domain that stores one, so that
 * none imports another for its shape.
 */
export interface SealedValue {
  /** Key id. */
  kid: string;
  /** base64 of the 12-byte IV. */
  iv: string;
  /** base64 of ciphertext and tag. */
  ct: string;
}
