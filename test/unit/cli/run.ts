// Runs `loopguard …` in-process with captured streams (the same entry as bin/loopguard.js, without a process).
import { runCli, type CliDeps } from '../../../src/cli/program.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(args: string[], options: { stdin?: string; doctor?: CliDeps['doctor'] } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    io: {
      stdout: { write: (s: string) => ((stdout += s), true) },
      stderr: { write: (s: string) => ((stderr += s), true) },
      readStdin: async () => options.stdin ?? '',
    },
    ...(options.doctor ? { doctor: options.doctor } : {}),
  });
  return { code, stdout, stderr };
}

/** The failure report: exactly one line on stderr, nothing on stdout. */
export function oneLineError(r: CliResult): string {
  const lines = r.stderr.trimEnd().split('\n');
  if (lines.length !== 1 || r.stdout !== '') throw new Error(`expected one line on stderr and no stdout, got:\n${r.stderr}\n---\n${r.stdout}`);
  return lines[0] as string;
}
