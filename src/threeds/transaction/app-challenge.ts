import { acsKeyPair } from '../app-issuer';
import { TEST_CHALLENGE_CODE } from '../challenge';
import { cresTransStatus, MAX_CODE_ATTEMPTS } from '../challenge-rules';
import {
  cresMessage,
  erroMessage,
  ERRO,
  readCReq,
  type ChallengeIds,
  type ErroCode,
} from '../../emv/challenge-messages';
import {
  challengeMessageKid,
  decryptChallengeMessage,
  deriveSecureChannelKey,
  encryptChallengeMessage,
  FIRST_COUNTER,
  isExpectedCounter,
  nextCounter,
} from '../../emv/secure-channel';
import type { AppChallengeFacts, AppMessageAnswer, SubmitOutcome } from '../transaction-api';
import type { TestChallenge } from './test-challenge';

/**
 * The test issuer's app-channel ACS inside the transaction's object (CONTRACT.md §12,
 * docs/threeds.md "The app channel"): an app's SDK posts CReqs, compact JWEs under the key both
 * sides derive, and gets CRes JWEs back; the challenge itself is the transaction's test challenge
 * (test-challenge.ts: the code, at most three evaluated, one result), so verification, GET and
 * the event report an app's challenge as a browser's.
 *
 * What is kept: the ids, the SDK's public key and reference number, and the next counter each
 * way. No key: each CReq re-derives the ACS's ephemeral key from the secret and its `kid`. The
 * decryption is asynchronous, so the decision is made after it in one synchronous block, on the
 * counters as they are then: of CReqs arriving at once with the same counter, one is the next and
 * the others get an Erro; an Erro changes nothing.
 */

/** The last counter there is: no CReq may follow it. */
const LAST_COUNTER = '999';

interface AppRow extends Record<string, SqlStorageValue> {
  reference: string;
  acs_trans_id: string;
  facts: string;
  next_sdk_counter: string;
  next_acs_counter: string;
}

export class AppChallenge {
  constructor(
    private readonly sql: SqlStorage,
    private readonly challenges: TestChallenge,
    private readonly secret: () => Uint8Array<ArrayBuffer> | undefined,
    /** Runs a decision's writes as one transaction (`transactionSync`): all of them, or none. */
    private readonly atomically: <T>(writes: () => T) => T,
  ) {}

  createTables(): void {
    this.sql
      .exec(`CREATE TABLE IF NOT EXISTS app_challenge (reference TEXT PRIMARY KEY, acs_trans_id TEXT NOT NULL UNIQUE,
      facts TEXT NOT NULL, next_sdk_counter TEXT NOT NULL, next_acs_counter TEXT NOT NULL)`);
  }

  /** Opens the app side of the challenge authenticate decided, in its claim's block. */
  open(reference: string, facts: AppChallengeFacts): void {
    this.sql.exec(
      'INSERT INTO app_challenge (reference, acs_trans_id, facts, next_sdk_counter, next_acs_counter) VALUES (?, ?, ?, ?, ?)',
      ...[reference, facts.acsTransID, JSON.stringify(facts), FIRST_COUNTER, FIRST_COUNTER],
    );
  }

  /** Forgets every app challenge (the session is wiped). */
  wipe(): void {
    this.sql.exec('DELETE FROM app_challenge');
  }

  /**
   * One CReq (`jwe`, as posted): the CRes that answers it, or an Erro. Never throws for what the
   * SDK sent.
   */
  async exchange(jwe: string, now: number): Promise<AppMessageAnswer> {
    const kid = challengeMessageKid(jwe);
    if (kid === null) return erro(ERRO.decryptionFailure, 'The CReq is not a compact JWE with a kid.');
    const found = this.row(kid);
    if (!found) return erro(ERRO.transactionNotRecognised, 'No app challenge has this acsTransID.');
    const facts = JSON.parse(found.facts) as AppChallengeFacts;
    const ids: ChallengeIds = {
      threeDSServerTransID: facts.threeDSServerTransID,
      acsTransID: facts.acsTransID,
      sdkTransID: facts.sdkTransID,
    };
    const { privateKey } = await acsKeyPair(this.secret(), kid);
    let key: Uint8Array<ArrayBuffer>;
    try {
      key = await deriveSecureChannelKey(privateKey, facts.sdkEphemPubKey, facts.sdkReferenceNumber);
    } catch {
      // authenticate refuses a key that is not a P-256 point; one stored before that check cannot agree a key.
      return erro(ERRO.decryptionFailure, 'No key can be agreed with the SDK’s ephemeral key.', ids);
    }
    const opened = await decryptChallengeMessage(jwe, key);
    if (!opened.ok) return erro(ERRO.decryptionFailure, `The CReq does not open (${opened.problem}).`, ids);
    const read = readCReq(opened.message, ids, facts.messageVersion);
    if (!read.ok) return erro(read.code, read.description, ids);
    // From here to the CRes's counter, no await: the decision is one atomic step.
    const decided = this.atomically(() => this.decide(found.reference, read.creq, facts.onSuccess, now));
    if (decided.kind === 'erro') return erro(decided.code, decided.description, ids);
    const cres = cresMessage(ids, facts.messageVersion, decided.acsCounter, decided.state);
    return { kind: 'cres', jwe: await encryptChallengeMessage(cres, key, kid) };
  }

  /**
   * The decision on a CReq that opened and belongs to the transaction, on the state as it is now:
   * an open challenge, the next counter; then the code, the cancel, or (no data: the first CReq)
   * the challenge shown. Counters move only with a CRes.
   */
  private decide(
    reference: string,
    creq: { sdkCounterStoA: string; challengeDataEntry?: string; challengeCancel?: string },
    onSuccess: string | undefined,
    now: number,
  ):
    | { kind: 'erro'; code: ErroCode; description: string }
    | { kind: 'cres'; acsCounter: string; state: Parameters<typeof cresMessage>[3] } {
    const row = this.sql.exec<AppRow>('SELECT * FROM app_challenge WHERE reference = ?', reference).toArray()[0];
    const state = this.challenges.state(reference, now);
    if (!row || !state) return { kind: 'erro', code: ERRO.transactionNotRecognised, description: 'No such challenge.' };
    if (state.result) {
      const timedOut = state.result.reason === 'expired';
      return {
        kind: 'erro',
        code: timedOut ? ERRO.timedOut : ERRO.transactionNotRecognised,
        description: timedOut ? "The challenge's time ran out." : 'The challenge has ended.',
      };
    }
    if (!isExpectedCounter(creq.sdkCounterStoA, row.next_sdk_counter))
      return {
        kind: 'erro',
        code: ERRO.decryptionFailure,
        description: `sdkCounterStoA ${creq.sdkCounterStoA} does not follow (expected ${row.next_sdk_counter}).`,
      };
    // Both next counters first: a challenge out of counters (999 CReqs) is refused before anything is counted.
    if (row.next_sdk_counter === LAST_COUNTER || row.next_acs_counter === LAST_COUNTER)
      return { kind: 'erro', code: ERRO.formatInvalid, description: 'The challenge has no counter left.' };
    const nextSdk = nextCounter(row.next_sdk_counter);
    const nextAcs = nextCounter(row.next_acs_counter);
    let outcome: SubmitOutcome | undefined;
    if (creq.challengeCancel !== undefined) outcome = this.challenges.submit(reference, 'cancel', now);
    else if (creq.challengeDataEntry !== undefined)
      outcome = this.challenges.submit(
        reference,
        creq.challengeDataEntry === TEST_CHALLENGE_CODE ? 'right' : 'wrong',
        now,
      );
    this.sql.exec(
      'UPDATE app_challenge SET next_sdk_counter = ?, next_acs_counter = ? WHERE reference = ?',
      ...[nextSdk, nextAcs, reference],
    );
    const acsCounter = row.next_acs_counter;
    if (outcome?.kind === 'ended') {
      // What verification will answer, in EMV's two CRes values (challenge-rules.ts).
      const transStatus = cresTransStatus(outcome.result, onSuccess ?? 'authenticated');
      return { kind: 'cres', acsCounter, state: { kind: 'done', transStatus } };
    }
    const left = outcome?.kind === 'retry' ? outcome.attemptsLeft : MAX_CODE_ATTEMPTS;
    const text =
      outcome?.kind === 'retry'
        ? `That code is not right: ${left} ${left === 1 ? 'try' : 'tries'} left.`
        : `Enter the code sent to your phone (${TEST_CHALLENGE_CODE} in test).`;
    return { kind: 'cres', acsCounter, state: { kind: 'ask', text } };
  }

  private row(acsTransID: string): AppRow | undefined {
    return this.sql.exec<AppRow>('SELECT * FROM app_challenge WHERE acs_trans_id = ?', acsTransID).toArray()[0];
  }
}

/** The answer to a CReq for an object that holds nothing (no transaction, or one wiped). */
export function unknownAppChallenge(): AppMessageAnswer {
  return erro(ERRO.transactionNotRecognised, 'No app challenge has this acsTransID.');
}

function erro(code: ErroCode, description: string, ids?: ChallengeIds): AppMessageAnswer {
  return { kind: 'erro', erro: erroMessage(code, description, ids) };
}
