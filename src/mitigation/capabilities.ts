// What loopguard learned about the account from CLB refusals, and how it unlearns it. A refusal holds back the
// changes that need the capability (the model reports the ticket to file); proof that the capability now works
// (keepalive seen on, a 100.64 source write accepted) forgets it at once, and so does time: after `retryAfterMs`
// loopguard tries again, so a granted ticket is noticed without a restart.
import type { AccountCapabilities } from '../model/facts.js';

type Capability = keyof AccountCapabilities;

export class LearnedCapabilities {
  private readonly learned = new Map<Capability, { message: string; at: number }>();
  /**
   * Told when what is known changes: a refusal learned (every plan that counted on the capability is planned again at
   * once, without it: the rest of the target's plan, e.g. an Ingress's rule sources, goes on) or forgotten (proof, or
   * expiry: the retry). Every target is planned again (routing.ts all).
   */
  onChange: () => void = () => undefined;

  constructor(private readonly retryAfterMs: number = 30 * 60_000) {}

  learn(capability: Capability, message: string, now = Date.now()): void {
    if (this.learned.has(capability)) return;
    this.learned.set(capability, { message, at: now });
    this.onChange();
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
