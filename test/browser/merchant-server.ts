import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The test merchant: serves the checkout page and plays the merchant's server, which calls the
 * 3DS API with its Basic credentials and receives the challenge's POST to its returnUrl.
 */

const MEDIA = 'application/vnd.worldpay.verifications.customers-v1.hal+json';
const AUTH = `Basic ${Buffer.from('test-merchant:test-password').toString('base64')}`;
export const CARD_NUMBER = '4571736000000000';

export interface ReturnPost {
  TransactionId: string | null;
  MD: string | null;
  verification: Record<string, unknown>;
}

export interface Merchant {
  url: string;
  returns: ReturnPost[];
  stop: () => Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startMerchant(workerUrl: URL): Promise<Merchant> {
  const page = readFileSync(new URL('./merchant-page.html', import.meta.url), 'utf8');
  const returns: ReturnPost[] = [];
  /** challenge reference → transaction reference, as a merchant keeps its orders. */
  const orders = new Map<string, string>();
  let origin = '';

  const api = async (step: string, payload: unknown): Promise<Record<string, any>> => {
    const response = await fetch(new URL(`/verifications/customers/3ds/${step}`, workerUrl), {
      method: 'POST',
      headers: { Authorization: AUTH, Accept: MEDIA, 'Content-Type': MEDIA },
      body: JSON.stringify(payload),
    });
    return response.json() as Promise<Record<string, any>>;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      if (req.method === 'GET' && req.url?.startsWith('/checkout')) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
      } else if (req.url === '/merchant/init') {
        await body(req);
        const answer = await api('deviceDataInitialize', {
          transactionReference: `order-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
          merchant: { entity: 'default' },
          paymentInstrument: { type: 'card/front', cardNumber: CARD_NUMBER, cardExpiryDate: { month: 12, year: 2035 } },
        });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
      } else if (req.url === '/merchant/authenticate') {
        const input = JSON.parse(await body(req)) as {
          transactionReference: string;
          collectionReference?: string;
          cardHolderName?: string;
        };
        const answer = await api('authenticate', {
          transactionReference: input.transactionReference,
          merchant: { entity: 'default' },
          instruction: {
            value: { amount: 1999, currency: 'GBP' },
            paymentInstrument: {
              type: 'card/front',
              cardNumber: CARD_NUMBER,
              cardExpiryDate: { month: 12, year: 2035 },
              ...(input.cardHolderName ? { cardHolderName: input.cardHolderName } : {}),
            },
          },
          deviceData: {
            acceptHeader: String(req.headers.accept ?? '*/*'),
            userAgentHeader: String(req.headers['user-agent'] ?? 'unknown'),
            ...(input.collectionReference ? { collectionReference: input.collectionReference } : {}),
          },
          challenge: { returnUrl: `${origin}/merchant/return`, windowSize: '390x400' },
        });
        if (answer.outcome === 'challenged') orders.set(answer.challenge.reference, input.transactionReference);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
      } else if (req.url === '/merchant/return' && req.method === 'POST') {
        const form = new URLSearchParams(await body(req));
        const reference = form.get('TransactionId') ?? '';
        const verification = await api('verification', {
          transactionReference: orders.get(reference) ?? 'unknown',
          merchant: { entity: 'default' },
          challenge: { reference },
        });
        returns.push({ TransactionId: form.get('TransactionId'), MD: form.get('MD'), verification });
        const outcome = JSON.stringify(String(verification.outcome ?? verification.errorName));
        res
          .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
          .end(
            `<!doctype html><p id="verification">${outcome}</p><script>parent.postMessage({ verification: ${outcome} }, '*');</script>`,
          );
      } else {
        res.writeHead(404).end();
      }
    } catch (e) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(e));
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: origin, returns, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}
