// `loopguard`: the read-only command line (doctor, plan). Wiring only: process streams and the exit status.
import { readAll } from './manifest-files.js';
import { runCli } from './program.js';

// No top-level await: the single binary (scripts/plugin/build.ts) bundles this file as CommonJS, which has none.
void runCli(process.argv.slice(2), {
  io: { stdout: process.stdout, stderr: process.stderr, readStdin: () => readAll(process.stdin) },
}).then((code) => {
  // Let stdout drain (a large JSON report into a pipe) before the status is set; nothing else keeps the loop alive.
  process.exitCode = code;
});
