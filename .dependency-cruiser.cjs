/**
 * The direction of imports in src/ (docs/README.md "The layers"), checked by dependency-cruiser in
 * `npm test` (pretest) and `npm run lint`: a request runs routes → a domain's steps (Worker side)
 * → its object (through the RPC interface in the domain's `*-api.ts`) → the domain's rules → the
 * shared mechanisms (src/storage/) → the base (src/*.ts, config, credentials, reference data).
 * Type-only imports count (`tsPreCompilationDeps`): a type import is what makes a step depend on
 * an object's class, and a cycle of types is a cycle.
 */

/** The base: imports only itself. */
const BASE =
  '^src/(failures|bytes|backoff|log|mask|media-types|env\\.d)\\.ts$|^src/(config|credentials|reference-data)/';

/** The Durable Objects' own files: reached only by the entries (which export the classes). */
const OBJECTS = '^src/threeds/transaction/|^src/tokens/token-group\\.ts$|^src/events/event-log\\.ts$';

/**
 * The parts the TokenGroup and EventLog classes are split into (the ThreeDsTransaction's are its
 * folder): each decides inside its object, so they are reached only by their object's files.
 */
const OBJECT_PARTS =
  '^src/tokens/(token-table|kept-conflicts|update-counts|token-events|new-token)\\.ts$|' +
  '^src/events/(event-store|endpoint-table|endpoint-copies|delivery-loop|delivery-attempt|endpoint-health)\\.ts$';

/** The Worker-side steps of each domain: what the routes call. */
const STEPS = '^src/threeds/steps/|^src/tokens/token-(steps|namespaces)\\.ts$';

/** Each object's RPC interface: below both its object and the steps that call it. */
const OBJECT_APIS =
  '^src/threeds/transaction-api\\.ts$|^src/tokens/token-group-api\\.ts$|^src/events/event-log-api\\.ts$';

/** The entries and the HTTP layers above the domains. */
const ABOVE_DOMAINS = '^src/(index|live)\\.ts$|^src/(app|routes|demo|http)/';

/** A forbidden import: every rule here is an error, and says why (dependency-cruiser prints it with the violation). */
function rule(name, comment, from, to) {
  return { name, comment, severity: 'error', from, to };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    rule(
      'no-circular',
      'No import cycle anywhere in src/, type-only imports included.',
      { path: '^src/' },
      { circular: true },
    ),
    rule(
      'base-imports-only-base',
      'The base (src/*.ts, config, credentials, reference data) knows nothing above it.',
      { path: BASE },
      { path: '^src/', pathNot: BASE },
    ),
    rule(
      'storage-imports-no-domain',
      'src/storage/ holds mechanisms every owner uses: it imports only itself and the base.',
      { path: '^src/storage/' },
      { path: '^src/', pathNot: `^src/storage/|${BASE}` },
    ),
    rule(
      'objects-reached-only-by-entries',
      "An object's class is imported only by the entries that export it (src/index.ts, src/live.ts) and its own " +
        "files: callers use its RPC interface (*-api.ts), so no step depends on an object's code.",
      { path: '^src/', pathNot: `^src/(index|live)\\.ts$|^src/threeds/transaction/` },
      { path: OBJECTS },
    ),
    rule(
      'objects-call-no-step',
      'An object decides with its rules and the shared mechanisms: never a step, a route or the HTTP layer.',
      { path: `${OBJECTS}|${OBJECT_PARTS}` },
      { path: `${STEPS}|${ABOVE_DOMAINS}` },
    ),
    rule(
      'object-parts-reached-only-by-their-object',
      "An object's parts decide inside it: only the object's own files import them (the steps call its RPC interface).",
      { path: '^src/', pathNot: `^src/(index|live)\\.ts$|${OBJECTS}|${OBJECT_PARTS}` },
      { path: OBJECT_PARTS },
    ),
    rule(
      'object-apis-below-objects-and-steps',
      "An object's RPC interface imports neither its object nor a step.",
      { path: OBJECT_APIS },
      { path: `${OBJECTS}|${STEPS}|${ABOVE_DOMAINS}` },
    ),
    rule(
      'threeds-protocol-below-steps',
      'src/threeds/live/ is the EMV protocol and the 3DS Server adapter (messages, the AReq, outcomes, timing): ' +
        'what a request does is in src/threeds/steps/, which imports the protocol, never the other way.',
      { path: '^src/threeds/live/' },
      { path: '^src/threeds/steps/' },
    ),
    rule(
      'emv-protocol-below-all',
      'src/emv/ is the EMV protocol (message rules, the SDK–ACS secure channel, acsSignedContent): the service ' +
        'and the fake provider both build on it, and the test 3DS SDK too, so it imports only itself and the base.',
      { path: '^src/emv/' },
      { path: '^src/', pathNot: `^src/emv/|${BASE}` },
    ),
    rule(
      'cards-below-tokens',
      'The cards (resolution, the card behind a token, its sealing) are below the tokens that use them: ' +
        'src/cards/ never imports src/tokens/ (the token record both read is in src/records/).',
      { path: '^src/cards/' },
      { path: '^src/tokens/' },
    ),
    rule(
      'records-below-domains',
      'src/records/ holds the shapes of stored records that several domains read (a token record, a sealed ' +
        'value): no domain of its own, so it imports only the BIN model, the storage shapes and the base.',
      { path: '^src/records/' },
      { path: '^src/', pathNot: `^src/(records|storage)/|^src/bin/model\\.ts$|${BASE}` },
    ),
    rule(
      'domains-below-http',
      'The domains (their steps, objects and rules) never import a route, the app, the demo or the HTTP layer.',
      { path: '^src/(threeds|tokens|events|cards|records|bin|merchants|schemas|emv|storage)/' },
      { path: ABOVE_DOMAINS },
    ),
    rule(
      'http-below-routes',
      'The request pipeline (src/http/) runs every route; it imports none.',
      { path: '^src/http/' },
      { path: '^src/(index|live)\\.ts$|^src/(app|routes|demo)/' },
    ),
    rule(
      'no-test-code-in-src',
      'Nothing in src/ imports the tests, the test 3DS SDK (test/sdk/), the scripts or the examples: they build ' +
        'on the service, never the other way, so none of them reaches a bundle.',
      { path: '^src/' },
      { path: '^(test|scripts|examples)/' },
    ),
    rule(
      'fake-provider-apart',
      'The fake 3DS Server provider is a Worker of its own: the service never imports it (the demo only its ' +
        'test cards), and it imports only the EMV rules and the Luhn check of the service.',
      { path: '^src/', pathNot: '^src/fake-3ds-server/|^src/demo/' },
      { path: '^src/fake-3ds-server/' },
    ),
    rule(
      'fake-provider-imports-emv-only',
      'The fake 3DS Server provider imports only the EMV rules and the Luhn check of the service.',
      { path: '^src/fake-3ds-server/' },
      { path: '^src/', pathNot: '^src/fake-3ds-server/|^src/emv/|^src/bin/luhn\\.ts$' },
    ),
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^worker-configuration\\.d\\.ts$' },
    // cloudflare:workers is the runtime's module, not a file.
    externalModuleResolutionStrategy: 'node_modules',
  },
};
