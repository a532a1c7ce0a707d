// What the CLI reports when it cannot do its job: one line naming the cause and the fix, exit status 2
// (`loopguard doctor` and `loopguard plan` keep 0 for "no risk" and 1 for "risk found").
import { ClbError } from '../cloud/errors.js';
import { kubeErrorMessage } from '../runtime/kube-errors.js';

export const EXIT_OK = 0;
export const EXIT_RISK = 1;
export const EXIT_CANNOT_SCAN = 2;

/** A failure the user fixes by changing an input: printed as one line, no stack, exit 2. */
export class CliError extends Error {
  readonly exitCode = EXIT_CANNOT_SCAN;
  constructor(message: string) {
    super(oneLine(message));
    this.name = 'CliError';
  }
}

/** Collapses whitespace and newlines: every report of a failure is one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** The one-line text of any error: apiserver errors without their header dump, CLB errors with cause and fix. */
export function errorText(err: unknown): string {
  if (err instanceof CliError || err instanceof ClbError) return oneLine(err.message);
  return oneLine(kubeErrorMessage(err));
}

/** The first line of an error's message, also for errors from another realm (where `instanceof Error` fails). */
export function messageOf(err: unknown): string {
  const m = typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string' ? (err as { message: string }).message : String(err);
  return m.split('\n')[0] ?? '';
}
