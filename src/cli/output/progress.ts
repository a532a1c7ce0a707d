// A progress bar on stderr while the doctor reads CLBs: only on a terminal (never in a pipe, a file or CI logs) and
// only when there are more CLBs than the terminal has rows, so a small scan prints nothing but its report.
export interface Progress {
  update(done: number): void;
  done(): void;
}

export interface ProgressStream {
  isTTY?: boolean;
  rows?: number;
  columns?: number;
  write(chunk: string): boolean;
}

const NONE: Progress = { update: () => undefined, done: () => undefined };

/** Pure: `Reading CLBs [#########-----------]  45/100` in at most `width` characters. */
export function renderBar(label: string, done: number, total: number, width: number): string {
  const counter = `${String(done).padStart(String(total).length)}/${total}`;
  const room = Math.max(10, Math.min(40, width - label.length - counter.length - 5));
  const filled = total > 0 ? Math.round((room * Math.min(done, total)) / total) : room;
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(room - filled)}] ${counter}`;
}

export function progressBar(stream: ProgressStream, label: string, total: number, enabled = true): Progress {
  const screenful = stream.rows ?? 24;
  if (!enabled || !stream.isTTY || total <= screenful) return NONE;
  const draw = (done: number) => stream.write(`\r${renderBar(label, done, total, stream.columns ?? 80)}`);
  draw(0);
  return {
    update: draw,
    // Clear the line so the report starts clean.
    done: () => stream.write(`\r${' '.repeat(Math.min(stream.columns ?? 80, 120))}\r`),
  };
}
