import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, convertSchemas, SCHEMAS } from '../../scripts/openapi/document';
import { EVENT_TYPES } from '../../src/events/event-types';
import { jsonObject, namedCheck } from '../../src/schemas/field-errors';

/**
 * The OpenAPI document (scripts/openapi/document.ts): every schema converts, the document is
 * valid OpenAPI 3.1, and the file the Worker serves is this build's. That every answer of the
 * integration tests matches it is checked in the worker project (test/worker/openapi-compat.ts).
 */

type Json = Record<string, any>;
const document = buildOpenApiDocument('0.0.0-test');

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (the official schema, every $ref resolved)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has every operation of the Worker', () => {
    const operations = Object.entries(document.paths as Json).flatMap(([path, item]) =>
      Object.keys(item as Json)
        .filter((k) => k !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /',
        'GET /health',
        'POST /api/cardBin/panLookup',
        'POST /api/cardBin/binLookup',
        'OPTIONS /api/cardBin/binLookup',
        'POST /verifications/customers/3ds/deviceDataInitialize',
        'POST /verifications/customers/3ds/merchantInitiated',
        'POST /verifications/customers/3ds/deviceDataInitialization',
        'POST /verifications/customers/3ds/authenticate',
        'POST /verifications/customers/3ds/authentication',
        'POST /verifications/customers/3ds/verification',
        'GET /verifications/customers/3ds/authentications/{transactionReference}',
        'POST /verifications/customers/3ds/sandbox/completeChallenge',
        'GET /events',
        'GET /events/{eventId}',
        'POST /events/{eventId}/redeliver',
        'POST /events/endpoints',
        'GET /events/endpoints',
        'GET /events/endpoints/{endpointId}',
        'PATCH /events/endpoints/{endpointId}',
        'DELETE /events/endpoints/{endpointId}',
        'POST /events/endpoints/{endpointId}/rotateSecret',
        'POST /events/endpoints/{endpointId}/ping',
        'POST /events/endpoints/{endpointId}/recover',
        'POST /tokens',
        'GET /tokens',
        'GET /tokens/{tokenId}',
        'DELETE /tokens/{tokenId}',
        'PUT /tokens/{tokenId}/description',
        'PUT /tokens/{tokenId}/paymentInstrument/cardHolderName',
        'PUT /tokens/{tokenId}/paymentInstrument/cardExpiryDate',
        'PUT /tokens/{tokenId}/paymentInstrument/billingAddress',
        'PUT /tokens/{tokenId}/schemeTransactionReference',
        'GET /tokens/{tokenId}/conflicts/{conflictId}',
        'PUT /tokens/{tokenId}/conflicts/{conflictId}',
        'POST /3ds/ddc',
        'POST /3ds/ddc/facts/{handle}',
        'POST /3ds/method/{handle}',
        'POST /3ds/challenge',
        'POST /3ds/challenge/submit',
        'POST /3ds/challenge/notify/{handle}',
        'GET /3ds/test/directory-server',
        'POST /3ds/app/creq/{handle}',
      ].sort(),
    );
  });

  it('converts every request and answer schema, the object guard as an object', () => {
    const schemas = (document.components as Json).schemas as Json;
    expect(Object.keys(schemas).sort()).toEqual(Object.keys(SCHEMAS).sort());
    expect(schemas.PanLookupRequest).toMatchObject({
      type: 'object',
      required: ['merchant'],
      properties: { cardNumber: { type: 'string', minLength: 12, maxLength: 19, pattern: '^\\d*$' } },
    });
    expect(schemas.AuthenticateRequest.properties.challenge.properties.windowSize).toMatchObject({
      enum: ['250x400', '390x400', '500x600', '600x400', 'fullPage'],
      default: '390x400',
    });
  });

  it("takes card/networkToken under version 3's 3DS media type only", () => {
    const schemas = (document.components as Json).schemas as Json;
    const paths = document.paths as Json;
    for (const [path, request] of [
      ['/verifications/customers/3ds/authenticate', 'AuthenticateRequest'],
      ['/verifications/customers/3ds/authentication', 'AuthenticateRequest'],
      ['/verifications/customers/3ds/deviceDataInitialize', 'DeviceDataInitializeRequest'],
      ['/verifications/customers/3ds/deviceDataInitialization', 'DeviceDataInitializeRequest'],
    ] as const) {
      const content = paths[path].post.requestBody.content as Json;
      expect(content['application/vnd.worldpay.verifications.customers-v1.hal+json'].schema.$ref).toBe(
        `#/components/schemas/${request}`,
      );
      expect(content['application/vnd.worldpay.verifications.customers-v2.hal+json'].schema.$ref).toBe(
        `#/components/schemas/${request}`,
      );
      expect(content['application/vnd.worldpay.verifications.customers-v3.hal+json'].schema.$ref).toBe(
        `#/components/schemas/${request}V3`,
      );
    }
    const types = (schema: Json): string[] =>
      JSON.stringify(schema)
        .match(/"const":"card\/[^"]+"/g)!
        .map((m) => m.slice(9, -1))
        .sort();
    expect(types(schemas.AuthenticateRequest)).toEqual(['card/front', 'card/tokenized']);
    expect(types(schemas.AuthenticateRequestV3)).toEqual(['card/front', 'card/networkToken', 'card/tokenized']);
    expect(types(schemas.DeviceDataInitializeRequestV3)).toEqual(['card/front', 'card/networkToken', 'card/tokenized']);
    const token = JSON.stringify(schemas.AuthenticateRequestV3);
    expect(token).toContain('"tokenNumber"');
    // The verification request is the same in every version.
    const verification = paths['/verifications/customers/3ds/verification'].post.requestBody.content as Json;
    expect(verification['application/vnd.worldpay.verifications.customers-v3.hal+json'].schema.$ref).toBe(
      '#/components/schemas/VerificationRequest',
    );
  });

  it('describes the app channel and decoupled authentication (CONTRACT §12) on authenticate and its answer', () => {
    const schemas = (document.components as Json).schemas as Json;
    for (const name of ['AuthenticateRequest', 'AuthenticateRequestV3']) {
      const request = schemas[name] as Json;
      const channels = (request.properties.deviceData.oneOf as Json[]).map((d) => d.properties.channel);
      expect(channels).toEqual([{ const: 'browser' }, { const: 'app' }]);
      const app = (request.properties.deviceData.oneOf as Json[])[1]!;
      expect(app.required).toEqual(['channel', 'sdk']);
      expect(app.properties.sdk.required).toEqual(
        expect.arrayContaining([
          'appId',
          'encData',
          'ephemeralPublicKey',
          'maxTimeout',
          'referenceNumber',
          'transactionId',
        ]),
      );
      expect(Object.keys(app.properties.sdk.properties)).toEqual(
        expect.arrayContaining(['interface', 'uiTypes', 'appUrl', 'variant', 'wrapped']),
      );
      expect(request.properties.decoupled).toEqual({
        type: 'object',
        properties: { maxMinutes: { type: 'integer', minimum: 1, maximum: 10_080 } },
        required: ['maxMinutes'],
      });
    }
    const answer = schemas.ThreeDsAnswer as Json;
    expect(answer.properties.outcome.enum).toEqual(expect.arrayContaining(['challenged', 'decoupled']));
    expect(JSON.stringify(answer.properties.decoupled)).toContain('"expiresAt"');
    // An app's challenge is {reference, payload} (no page): the payload is described.
    expect(JSON.stringify(answer.properties.challenge)).toContain('"payload"');
  });

  it("describes every event type as a webhook, signed the Standard Webhooks way, with the body's subject and sequence", () => {
    const webhooks = document.webhooks as Json;
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    const schemas = (document.components as Json).schemas as Json;
    for (const [eventType, item] of Object.entries(webhooks)) {
      const hook = (item as Json).post as Json;
      expect((hook.parameters as Json[]).map((p) => `${p.in} ${p.name}`)).toEqual([
        'header webhook-id',
        'header webhook-timestamp',
        'header webhook-signature',
      ]);
      const body = schemas[(hook.requestBody.content['application/json'].schema.$ref as string).split('/').pop()!];
      expect(body.required, eventType).toEqual(
        expect.arrayContaining(['eventId', 'eventType', 'createdAt', 'subject', 'sequence', 'merchant', 'data']),
      );
    }
    // The Standard Webhooks test vector's signature matches the documented header.
    const signature = (webhooks.ping.post.parameters as Json[]).find((p) => p.name === 'webhook-signature')!;
    const pattern = new RegExp(signature.schema.pattern as string);
    expect(pattern.test('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')).toBe(true);
    expect(
      pattern.test('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='),
    ).toBe(true);
    expect(pattern.test('t=1614265330,v1=' + 'a'.repeat(64))).toBe(false);
  });

  it("takes the events routes' own request schemas, and names their errors", () => {
    const schemas = (document.components as Json).schemas as Json;
    const paths = document.paths as Json;
    expect(schemas.CreateEventEndpointRequest).toMatchObject({
      type: 'object',
      required: ['url', 'events'],
      properties: {
        url: { type: 'string', maxLength: 2048, description: expect.stringContaining('fieldHasInvalidValue') },
      },
    });
    expect(schemas.UpdateEventEndpointRequest.properties.state).toMatchObject({ enum: ['enabled', 'disabled'] });
    expect(schemas.RotateSecretRequest.properties.previousValidForSeconds).toMatchObject({
      type: 'integer',
      minimum: 0,
      maximum: 604800,
    });
    expect(paths['/events/endpoints'].post.responses['409'].description).toContain('tooManyEndpoints');
    expect(Object.keys(paths['/events/endpoints'].post.responses)).toContain('201');
    expect(schemas.EventEndpointWithSecret.required).toContain('secret');
    expect(schemas.EventEndpoint.properties).not.toHaveProperty('secret');
    expect(paths['/events'].get.parameters.filter((p: Json) => p.in === 'query').map((p: Json) => p.name)).toEqual([
      'since',
      'type',
      'deliveryState',
      'endpointId',
      'order',
    ]);
    expect(JSON.stringify(schemas.EventPage)).toContain('"held"');
    // Only GET of one event has each delivery's history.
    expect(JSON.stringify(schemas.EventPage)).not.toContain('"history"');
    expect(schemas.Event.properties.deliveries.items.required).toContain('history');
  });

  it('says in description what JSON Schema cannot: the Luhn check and its error name', () => {
    const card = ((document.components as Json).schemas as Json).PanLookupRequest.properties.cardNumber as Json;
    expect(card.description).toContain('panFailedLuhnCheck');
  });

  it('fails the build when a schema does not convert', () => {
    const unconvertible = jsonObject({ amount: v.pipe(v.string(), v.transform(Number)) });
    expect(() => convertSchemas({ ...SCHEMAS, Broken: unconvertible })).toThrow(/transform/);
    // A check converts, with its rule in the description.
    const checked = jsonObject({
      x: v.pipe(
        v.string(),
        namedCheck('fieldHasInvalidValue', (s: string) => s === 'x', 'Only x.'),
      ),
    });
    expect(convertSchemas({ Checked: checked }).Checked).toMatchObject({
      properties: { x: { type: 'string', description: expect.stringContaining('fieldHasInvalidValue') } },
    });
  });

  it('names the origin that serves it as its server (a relative URL), not a fixed host or port', () => {
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    // Resolved as Swagger UI and other clients resolve it: against the document's own URL.
    for (const at of ['http://localhost:8799/openapi.json', 'https://payments.example.com/openapi.json']) {
      expect(new URL((document.servers as Json[])[0]!.url as string, at).origin).toBe(new URL(at).origin);
    }
  });

  it("says the project's licence, as package.json does (an SPDX identifier)", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Json;
    expect(pkg.license).toBe('Apache-2.0');
    expect((document.info as Json).license).toEqual({ name: 'Apache-2.0', identifier: pkg.license });
  });

  it('is the document the Worker serves (public/openapi.json, built before the tests)', () => {
    const served = JSON.parse(readFileSync(new URL('../../public/openapi.json', import.meta.url), 'utf8')) as Json;
    expect({ ...served, info: { ...(served.info as Json), version: '0.0.0-test' } }).toEqual(document);
  });
});
