/** Types of verify-event-signature.mjs, for the tests that import it (test/worker/events-signature.test.ts, test/unit). */
export function verifyEventSignature(
  rawBody: string,
  header: string | null,
  secrets: string | string[],
  nowSeconds?: number,
): Promise<boolean>;
