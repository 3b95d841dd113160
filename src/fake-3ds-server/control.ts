import { DurableObject } from 'cloudflare:workers';
import { changedOffset, type ClockChange } from './clock';
import { takeFault, type ArmedFault, type FaultEndpoint } from './faults';

/**
 * The one control object of the fake: the clock's offset, the armed faults, and which
 * transaction each acsTransID belongs to (for the control route that ends a challenge, and for a
 * 3RI's prior reference). One object, so that every call sees the same clock and faults.
 */
export class FakeControl extends DurableObject {
  private async offsetMs(): Promise<number> {
    return (await this.ctx.storage.get<number>('offsetMs')) ?? 0;
  }

  private async armed(): Promise<ArmedFault[]> {
    return (await this.ctx.storage.get<ArmedFault[]>('faults')) ?? [];
  }

  /** The clock's offset from Date.now(), ms. */
  async clock(): Promise<number> {
    return this.offsetMs();
  }

  /** Moves or resets the clock; answers the new offset. */
  async changeClock(change: ClockChange): Promise<number> {
    const offsetMs = changedOffset(await this.offsetMs(), change);
    await this.ctx.storage.put('offsetMs', offsetMs);
    return offsetMs;
  }

  /** A call of a provider endpoint begins: the clock's offset, and the fault that hits it (used up). */
  async beginCall(endpoint: FaultEndpoint): Promise<{ offsetMs: number; fault?: ArmedFault }> {
    const { fault, rest } = takeFault(await this.armed(), endpoint);
    if (fault) await this.ctx.storage.put('faults', rest);
    return { offsetMs: await this.offsetMs(), ...(fault ? { fault } : {}) };
  }

  /** Arms a fault after those already armed; answers all armed faults. */
  async armFault(fault: ArmedFault): Promise<ArmedFault[]> {
    const faults = [...(await this.armed()), fault];
    await this.ctx.storage.put('faults', faults);
    return faults;
  }

  async faults(): Promise<ArmedFault[]> {
    return this.armed();
  }

  async clearFaults(): Promise<void> {
    await this.ctx.storage.delete('faults');
  }

  /** Remembers the transaction of an ARes's acsTransID. */
  async rememberAcsTransaction(acsTransID: string, threeDSServerTransID: string): Promise<void> {
    await this.ctx.storage.put(`acs:${acsTransID}`, threeDSServerTransID);
  }

  /** The threeDSServerTransID of an acsTransID the ACS answered. */
  async acsTransaction(acsTransID: string): Promise<string | undefined> {
    return this.ctx.storage.get<string>(`acs:${acsTransID}`);
  }
}
