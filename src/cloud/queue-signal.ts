// Shutdown has two moments (README "Stopping"): when it begins, no new write may be submitted; when its grace
// period ends, everything is aborted. A write waiting for its turn (the CLB's previous write, a slot, the
// action's budget) must therefore give up at the first moment, but a submitted one, whose task is being
// awaited, only at the second. p-queue rejects a task's promise when the signal it was given aborts, even
// after the task started, so the waits get a signal that stops following `stopping` once the task starts.

export interface QueueSignal {
  /** For the wait: aborts with `signal`, or with `stopping` until `started()`. */
  signal: AbortSignal | undefined;
  /** The task started: from now on only `signal` ends it. */
  started: () => void;
}

export function queueSignal(signal: AbortSignal | undefined, stopping: AbortSignal | undefined): QueueSignal {
  if (!stopping) return { signal, started: () => undefined };
  const waiting = new AbortController();
  const onStop = (): void => waiting.abort(stopping.reason);
  if (stopping.aborted) onStop();
  else stopping.addEventListener('abort', onStop, { once: true });
  return {
    signal: signal ? AbortSignal.any([signal, waiting.signal]) : waiting.signal,
    started: () => stopping.removeEventListener('abort', onStop),
  };
}
