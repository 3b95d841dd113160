import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { hmacKey } from './hmac-derived-values';

/**
 * HS256 JWTs for the 3DS browser steps, signed with the JWT_SIGNING_KEY secret (jose does the
 * JOSE details and constant-time verification). Each kind of token has its own audience, so a
 * device-data JWT can never pass as a challenge JWT or as a challenge page's state.
 */

export const JWT_ISSUER = 'card-edge';
export type TokenKind = 'ddc' | 'challenge' | 'challenge-state';
/** Signs `claims` with iat = now, exp = now + lifetime, the given (or a random) jti, our issuer and the kind. */
export async function signJwt(
  key: Uint8Array<ArrayBuffer>,
  kind: TokenKind,
  claims: JWTPayload,
  lifetimeSeconds: number,
  now = Date.now(),
): Promise<{ jwt: string; jti: string; iat: number; exp: number }> {
  const iat = Math.floor(now / 1000);
  const exp = iat + lifetimeSeconds;
  const jti = claims.jti ?? crypto.randomUUID();
  const jwt = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(JWT_ISSUER)
    .setAudience(kind)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(await hmacKey(key));
  return { jwt, jti, iat, exp };
}

export type VerifyResult<T> =
  | { ok: true; claims: T & JWTPayload }
  /** Signed by us but past its expiry: the claims are authentic, only late. */
  | { ok: false; reason: 'expired'; claims: T & JWTPayload }
  | { ok: false; reason: 'invalid' };

/**
 * Verifies signature, algorithm, issuer, audience and expiry, and that `iat`, `exp` and `jti`
 * are there (a token without them could live for ever or be told apart from no other). Never
 * throws on a bad token. An expired token still hands back its claims (jose checks the
 * signature before the claims), so a caller can end what the token was for.
 */
export async function verifyJwt<T extends object>(
  key: Uint8Array<ArrayBuffer>,
  kind: TokenKind,
  jwt: string,
  now = Date.now(),
): Promise<VerifyResult<T>> {
  try {
    const { payload } = await jwtVerify(jwt, await hmacKey(key), {
      algorithms: ['HS256'],
      issuer: JWT_ISSUER,
      audience: kind,
      currentDate: new Date(now),
      requiredClaims: ['iat', 'exp', 'jti'],
    });
    return { ok: true, claims: payload as T & JWTPayload };
  } catch (e) {
    if (e instanceof errors.JWTExpired && e.payload.aud === kind && e.payload.iss === JWT_ISSUER) {
      return { ok: false, reason: 'expired', claims: e.payload as T & JWTPayload };
    }
    return { ok: false, reason: 'invalid' };
  }
}
