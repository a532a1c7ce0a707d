// What loopguard learned about the account from CLB refusals, and how it unlearns it. A refusal holds back the
// changes that need the capability (the model reports the ticket to file); proof that the capability now works
// (keepalive seen on, a 100.64 source write accepted) forgets it at once, and so does time: after `retryAfterMs`
// loopguard tries again, so a granted ticket is noticed without a restart.
import type { AccountCapabilities } from '../model/facts.js';

type Capability = keyof AccountCapabilities;

export class LearnedCapabilities {
  private readonly learned = new Map<Capability, { message: string; at: number }>();
  /**
   * Told when a refusal is forgotten (proof, or expiry: the retry): every target held back by it is planned again
   * (routing.ts all). A refusal learned needs no such round: the target that met it failed and is planned again in its
   * policy's next round, and any other is planned with it whenever something concerns it.
   */
  onChange: () => void = () => undefined;

  constructor(private readonly retryAfterMs: number = 30 * 60_000) {}

  learn(capability: Capability, message: string, now = Date.now()): void {
    if (!this.learned.has(capability)) this.learned.set(capability, { message, at: now });
  }

  forget(capability: Capability): boolean {
    const forgotten = this.learned.delete(capability);
    if (forgotten) this.onChange();
    return forgotten;
  }

  /** The capabilities as the assessment reads them; expired refusals are forgotten (the operator asks beside each drift pass). */
  snapshot(now = Date.now()): AccountCapabilities {
    const out: AccountCapabilities = {};
    for (const [capability, { message, at }] of this.learned) {
      if (now - at >= this.retryAfterMs) this.forget(capability);
      else out[capability] = message;
    }
    return out;
  }
}
