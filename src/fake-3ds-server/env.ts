import type { FakeControl } from './control';
import type { FakeTransaction } from './transaction';

/** The fake 3DS Server's bindings (src/fake-3ds-server/wrangler.toml). */
export interface FakeEnv {
  /** The key callers must send in the `APIKey` header. */
  FAKE_API_KEY: string;
  /** The origin the fake's messages name (method URL, acsURL); the request's origin when unset. */
  FAKE_PUBLIC_URL?: string;
  /** One object per transaction, named by its threeDSServerTransID. */
  TRANSACTIONS: DurableObjectNamespace<FakeTransaction>;
  /** One object for the clock, the faults and the challenges' index. */
  CONTROL: DurableObjectNamespace<FakeControl>;
}
