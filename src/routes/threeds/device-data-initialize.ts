import { THREE_DS_API } from '../../http/headers';
import type { Endpoint } from '../../http/pipeline';
import { validateBody } from '../../http/validation';
import { SESSION_TTL_MS } from '../../storage/threeds-store';
import { signJwt } from '../../threeds/jwt';
import { DEVICE_DATA_INITIALIZE } from '../../threeds/schemas';
import { cardFacts, orgUnitId, requestHash, THREEDS_PATH, threeDsContext } from './common';

/** A DDC JWT is good for 10 minutes (CONTRACT.md §6.1: exp = iat + 600). */
export const DDC_JWT_LIFETIME_SECONDS = 600;

/** `POST /verifications/customers/3ds/deviceDataInitialize` (CONTRACT.md §6.1). */
export const deviceDataInitialize: Endpoint = {
  api: THREE_DS_API,
  hasBody: true,
  async handle({ merchant, body, rc }) {
    const request = validateBody(DEVICE_DATA_INITIALIZE, body);
    const ctx = threeDsContext(merchant, request.merchant.entity, request.transactionReference, rc);
    const card = request.paymentInstrument
      ? await cardFacts(request.paymentInstrument, merchant, ctx, '$.paymentInstrument', rc)
      : undefined;

    const hash = await requestHash(ctx.key, request);
    // The INIT key is written once per transaction: a retry gets the first initialization back,
    // and so does a changed body (a collection the browser already made stays tied to this
    // session; a different card wants a new transactionReference). Read-then-write without
    // compare-and-set (KV has none): two requests racing may both write; either answer is valid.
    const existing = await ctx.store.getInit(ctx.scope);
    if (existing) {
      if (existing.requestHash !== hash) rc.log.note = 'deviceDataInitialize repeated with another body: first answer kept';
      return { status: 200, body: existing.response };
    }

    const ddc = await signJwt(ctx.key, 'ddc', { OrgUnitId: await orgUnitId(ctx.scope) }, DDC_JWT_LIFETIME_SECONDS, ctx.now);
    const response = {
      outcome: 'initialized',
      transactionReference: request.transactionReference,
      deviceDataCollection: {
        jwt: ddc.jwt,
        url: `${ctx.baseUrl}/3ds/ddc`,
        ...(card ? { bin: card.bin } : {}),
      },
      _links: { '3ds:authenticate': { href: `${ctx.baseUrl}${THREEDS_PATH}/authenticate` } },
    };
    await ctx.store.putInit(ctx.scope, {
      requestHash: hash, response, ddcJti: ddc.jti, expiresAt: ctx.now + SESSION_TTL_MS,
    });
    return { status: 200, body: response };
  },
};
