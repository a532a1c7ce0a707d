// `npm run lab [-- --profile short|full] [--out DIR] [--l7-timeout-ms MS] [--nodes N] [--probe]`: builds the data-plane
// lab in network namespaces, measures the three loopback faults before and after their fixes, prints the tables
// (with --probe also what loopguard's probe agent measures, in one line), writes results.json and latency.png to the
// output folder, and removes everything it created (on success, error, SIGINT and SIGTERM). See docs/lab.md.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { reapOrphanBundles } from './agent-bundle.js';
import { latencySvg, renderPng } from './chart.js';
import { Lab, stopAllLabs } from './lab.js';
import { gatherFacts, missing, parseSimulated } from './preflight.js';
import { report } from './report.js';
import { measureProbe } from './probe.js';
import { PROFILES, runAll } from './scenarios.js';
import { reapOrphans } from './topology.js';

const program = new Command('lab')
  .description('Reproduce the CLB loopback faults in real Linux kernels (network namespaces) and measure their fixes')
  .addOption(new Option('--profile <name>', 'full (default, about a minute) or short (CI)').choices(['full', 'short']).default('full'))
  .option('--out <dir>', 'output folder for results.json and latency.png', '.lab')
  .option('--l7-timeout-ms <ms>', "the L7 CLB's real-server timeout before it tries the next (Tencent's CLB loopback doc: about 4 s)", '4000')
  .option('--nodes <n>', 'nodes in the lab (2–9)', '3')
  .option('--probe', "also run loopguard's probe agent from the pod network before and after the fixes, and print what it measured")
  .option('--simulate-missing <list>', `pretend these are missing, to check the preflight (${['root', 'ip', 'netns', 'veth', 'nft', 'sysctl'].join(',')})`)
  .parse();

const opts = program.opts<{ profile: 'full' | 'short'; out: string; l7TimeoutMs: string; nodes: string; simulateMissing?: string; probe?: boolean }>();

async function main(): Promise<number> {
  const nodes = Number(opts.nodes);
  const l7TimeoutMs = Number(opts.l7TimeoutMs);
  if (!Number.isInteger(nodes) || nodes < 2 || nodes > 9) throw new Error(`--nodes must be 2–9, got ${opts.nodes}`);
  if (!Number.isFinite(l7TimeoutMs) || l7TimeoutMs < 100) throw new Error(`--l7-timeout-ms must be ≥ 100, got ${opts.l7TimeoutMs}`);
  const lacking = missing(await gatherFacts(parseSimulated(opts.simulateMissing)));
  if (lacking.length > 0) {
    console.error('npm run lab cannot run on this machine:');
    for (const line of lacking) console.error(`  - ${line}`);
    return 2;
  }
  const reaped = await reapOrphans();
  await reapOrphanBundles();
  if (reaped.length > 0) console.log(`removed ${reaped.length} namespace(s) left by killed lab runs: ${reaped.join(' ')}`);

  const t0 = Date.now();
  const lab = await Lab.start({ nodes, l7TimeoutMs, log: (l) => console.log(l) });
  try {
    const profile = PROFILES[opts.profile];
    const results = await runAll(lab, profile, (l) => console.log(l));
    if (opts.probe) results.probe = await measureProbe(lab, profile.probe, profile.connectTimeoutMs, (l) => console.log(l));
    console.log('');
    for (const line of report(results)) console.log(line);
    if (results.probe) {
      console.log('');
      console.log(results.probe.line);
    }
    const out = resolve(opts.out);
    await mkdir(out, { recursive: true });
    await writeFile(join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    const title = `L7 CLB latency, client pod on node1 → VIP:80 (${results.l7[0]?.summary.total ?? 0} requests per mode, ${nodes} nodes)`;
    await writeFile(join(out, 'latency.png'), await renderPng(latencySvg(results.l7, l7TimeoutMs, title)));
    console.log('');
    console.log(`wrote ${join(out, 'results.json')} and ${join(out, 'latency.png')}`);
    const probed = results.probe ? `, probe agent ${(results.probe.durationMs / 1000).toFixed(1)} s` : '';
    console.log(`profile ${profile.name}: measurements ${(results.durationMs / 1000).toFixed(1)} s${probed}, whole run ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await lab.stop();
  }
  return 0;
}

// SIGINT/SIGTERM: remove the namespaces (and the agents in them) before exiting with the signal's status. The run
// in progress then fails (its agents are gone); that error is not reported, the signal is.
let signalled: number | undefined;
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    signalled = code;
    console.error(`\n${signal}: removing the lab …`);
    void stopAllLabs().finally(() => process.exit(code));
  });
}

main().then(
  async (code) => {
    await stopAllLabs();
    process.exit(signalled ?? code);
  },
  async (err: unknown) => {
    if (signalled === undefined) console.error(err instanceof Error ? err.message : err);
    await stopAllLabs();
    process.exit(signalled ?? 1);
  },
);
