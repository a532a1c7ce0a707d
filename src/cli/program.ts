// The `loopguard` command line: subcommands, flags and help, parsed by commander. Flag names and environment
// variables are the operator's (src/runtime/config.ts), so one .dev/env or CI environment serves both. Exit status
// of every subcommand: 0 no risk, 1 risk found, 2 could not scan (bad flags included), with the reason in one line.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { ProfileFlags } from '../model/cluster-profile.js';
import { FIELDS, KUBE_PROXY_VERSION, type OperatorConfig } from '../runtime/config.js';
import type { DoctorDeps, DoctorOptions } from './doctor.js';
import { CliError, errorText, EXIT_CANNOT_SCAN, EXIT_OK } from './errors.js';
import { DOCTOR_FORMATS, PLAN_FORMATS, type OutputFormat } from './output/render.js';
import { runPlan, type PlanIo } from './plan.js';
import { formatVersion, readBuildInfo } from '../version.js';

export interface CliDeps {
  io: PlanIo;
  doctor?: DoctorDeps;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * A flag the operator also takes, built from its entry in src/runtime/config.ts: the same name, variable, help,
 * allowed values and range, and the same reading of an empty variable (unset).
 */
function operatorOption(key: keyof OperatorConfig, valueName: string, description?: string): Option {
  const field = FIELDS.find((f) => f.key === key);
  if (!field) throw new Error(`no operator flag for ${key}`);
  const allowed = field.allowed?.filter(Boolean);
  const option = new Option(`--${field.flag} <${valueName}>`, description ?? field.help).env(field.env);
  if (allowed) option.choices(allowed);
  return option.argParser((raw: string) => {
    if (raw === '') return undefined;
    if (allowed && !allowed.includes(raw)) throw new InvalidArgumentError(`must be one of ${allowed.join(', ')}`);
    if (key === 'kubeProxyVersion' && !KUBE_PROXY_VERSION.test(raw)) throw new InvalidArgumentError('expected a version such as v1.20.6-tke.12');
    if (field.kind === 'int') {
      const n = Number(raw);
      if (!Number.isInteger(n) || (field.min !== undefined && n < field.min) || (field.max !== undefined && n > field.max)) {
        throw new InvalidArgumentError(`expected a whole number from ${field.min ?? '-∞'} to ${field.max ?? '∞'}`);
      }
      return n;
    }
    return raw;
  });
}

/** The kube-proxy flags both subcommands take (the operator's overrides). */
function profileOptions(cmd: Command): Command {
  return cmd
    .addOption(operatorOption('kubeProxyMode', 'mode'))
    .addOption(operatorOption('kubeProxyVersion', 'version'))
    .addOption(operatorOption('kubeProxyPreventLoopback', 'bool'));
}

type ProfileOpts = ProfileFlags;

function profileFlags(o: ProfileOpts): ProfileFlags {
  return {
    ...(o.kubeProxyMode ? { kubeProxyMode: o.kubeProxyMode } : {}),
    ...(o.kubeProxyVersion ? { kubeProxyVersion: o.kubeProxyVersion } : {}),
    ...(o.kubeProxyPreventLoopback !== undefined ? { kubeProxyPreventLoopback: o.kubeProxyPreventLoopback } : {}),
  };
}

interface DoctorOpts extends ProfileOpts {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  kubeconfig?: string;
  context?: string[];
  allContexts?: boolean;
  loopguardNamespace: string;
  envoyGatewayNamespace: string;
  region?: string;
  clbEndpoint?: string;
  clbProtocol: string;
  cloudRateLimit: number;
  output: OutputFormat;
  progress: boolean;
}

interface PlanOpts extends ProfileOpts {
  filename?: string[];
  namespace: string;
  profileFrom?: string;
  healthCheckSource: 'vip' | '100.64' | 'unknown';
  keepalive: 'on' | 'off' | 'unknown';
  output: OutputFormat;
  warnOnly?: boolean;
  stdinName: string;
}

export function buildProgram(deps: CliDeps, setExit: (code: number) => void): Command {
  const { io } = deps;
  const versionLine = formatVersion(readBuildInfo());
  const program = new Command('loopguard')
    .description('Find Tencent Cloud CLB loopback faults in TKE clusters and manifests (read-only).')
    .version(versionLine)
    .showSuggestionAfterError()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) })
    .exitOverride();

  const doctor = program
    .command('doctor')
    .description('Scan the current kubeconfig\'s cluster: per Service, Ingress and Gateway the verdict, root cause, the plan Enforce would carry out, and topology alternatives. Never writes.')
    .option('-n, --namespace <namespace>', "namespace to scan (default: the kubeconfig context's, else default)")
    .option('-A, --all-namespaces', 'scan every namespace')
    .option('-l, --selector <selector>', 'label selector, as kubectl takes it (e.g. app=web,tier!=batch)')
    .option('--kubeconfig <path>', 'kubeconfig file (default: KUBECONFIG, else ~/.kube/config)')
    .addOption(new Option('--context <name>', 'kubeconfig context (default: the current context); repeat it to scan several clusters into one report with a cluster column').argParser(collect))
    .option('--all-contexts', "scan every context of the kubeconfig into one report (the fleet view)")
    .option('--loopguard-namespace <namespace>', "loopguard's namespace, where the probe agents' plan and reports are read", 'loopguard-system')
    .option('--envoy-gateway-namespace <namespace>', "Envoy Gateway's namespace, where it generates each Gateway's Service", 'envoy-gateway-system')
    .addOption(operatorOption('region', 'region', 'Tencent Cloud region of the CLBs, e.g. ap-guangzhou'))
    .addOption(operatorOption('clbEndpoint', 'host[:port]', 'CLB API endpoint, e.g. the local emulator'))
    .addOption(operatorOption('clbProtocol', 'protocol').default('https'))
    .addOption(operatorOption('cloudRateLimit', 'rps', 'CLB API requests per second per action (quota 20, shared with TKE and the operator)').default(10))
    .addOption(new Option('-o, --output <format>', 'output format').choices(DOCTOR_FORMATS).default('table'))
    .option('--no-progress', 'no progress bar (it is shown only on a terminal, for more CLBs than it has rows)');
  profileOptions(doctor).action(async (o: DoctorOpts) => {
    if (o.namespace && o.allNamespaces) throw new CliError('give either -n NAMESPACE or -A, not both');
    if (o.allContexts && o.context) throw new CliError('give either --context (repeatable) or --all-contexts, not both');
    if (!o.region) throw new CliError("no region: set --region or TENCENTCLOUD_REGION (e.g. ap-guangzhou), the region of the cluster's CLBs");
    const contexts = o.allContexts ? ('all' as const) : (o.context ?? []);
    // Loaded on use: `plan` and --help never load the Kubernetes client or the cloud SDK.
    const { runDoctor } = await import('./doctor.js');
    const options: DoctorOptions = {
      ...profileFlags(o),
      ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
      ...(contexts.length === 1 ? { context: contexts[0] as string } : {}),
      ...(o.namespace ? { namespace: o.namespace } : {}),
      allNamespaces: o.allNamespaces === true,
      ...(o.selector ? { selector: o.selector } : {}),
      loopguardNamespace: o.loopguardNamespace,
      envoyGatewayNamespace: o.envoyGatewayNamespace,
      clb: {
        region: o.region,
        ...(o.clbEndpoint ? { endpoint: o.clbEndpoint } : {}),
        protocol: o.clbProtocol.startsWith('http:') || o.clbProtocol === 'http' ? 'http' : 'https',
        rateLimit: Number(o.cloudRateLimit),
      },
      output: o.output,
      progress: o.progress,
    };
    if (contexts === 'all' || contexts.length > 1) {
      const { runFleetDoctor } = await import('./fleet.js');
      setExit(await runFleetDoctor(options, contexts, io, deps.doctor));
      return;
    }
    setExit(await runDoctor(options, io, deps.doctor));
  });

  const plan = program
    .command('plan')
    .description('Diagnose manifests offline (files, directories, multi-document YAML, kustomize build / helm template output on stdin) for a cluster profile given by flags or a saved doctor -o json.')
    .addOption(new Option('-f, --filename <path>', 'manifest file or directory, or - for standard input (repeatable)').argParser(collect))
    .option('-n, --namespace <namespace>', 'namespace of objects that name none', 'default')
    .option('--profile-from <file>', 'cluster profile from a saved `loopguard doctor -o json` (flags win)')
    .addOption(new Option('--health-check-source <source>', "the CLBs' health-check source, if known (accounts created after 2023-02-24 default to 100.64)").choices(['vip', '100.64', 'unknown']).default('unknown'))
    .addOption(new Option('--keepalive <state>', 'keepalive of Ingress listeners whose TkeServiceConfig is not among the manifests').choices(['on', 'off', 'unknown']).default('unknown'))
    .addOption(new Option('-o, --output <format>', 'output format (markdown: a PR comment; sarif: code scanning)').choices(PLAN_FORMATS).default('table'))
    .option('--warn-only', 'exit 0 even when a target is at risk')
    .option('--stdin-name <path>', 'the name standard input gets in locations (e.g. the kustomization it was built from)', 'stdin');
  profileOptions(plan).action(async (o: PlanOpts) => {
    if (!o.filename || o.filename.length === 0) throw new CliError('no manifests: give -f PATH (a file, a directory, or - for standard input)');
    const code = await runPlan(
      {
        ...profileFlags(o),
        filenames: o.filename,
        namespace: o.namespace,
        ...(o.profileFrom ? { profileFrom: o.profileFrom } : {}),
        pinned: {
          ...(o.healthCheckSource !== 'unknown' ? { healthCheckSource: o.healthCheckSource === 'vip' ? (0 as const) : (1 as const) } : {}),
          ...(o.keepalive !== 'unknown' ? { keepalive: o.keepalive === 'on' ? (1 as const) : (0 as const) } : {}),
        },
        output: o.output,
        warnOnly: o.warnOnly === true,
        stdinName: o.stdinName,
      },
      io,
    );
    setExit(code);
  });
  // `kubectl loopguard version`, as kubectl and most plugins spell it; the same line as --version.
  const version = program
    .command('version')
    .description('Print the version and the commit this loopguard was built from.')
    .action(() => void io.stdout.write(`${versionLine}\n`));
  for (const cmd of [doctor, plan, version]) cmd.showSuggestionAfterError().exitOverride();
  return program;
}

/** Runs `loopguard …` (argv without node and the script) and returns the exit status. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  let code: number = EXIT_OK;
  const program = buildProgram(deps, (c) => (code = c));
  if (argv.length === 0) {
    deps.io.stderr.write(program.helpInformation());
    return EXIT_CANNOT_SCAN;
  }
  const command = argv[0] === 'doctor' || argv[0] === 'plan' ? `loopguard ${argv[0]}` : 'loopguard';
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version end with exit code 0; commander has already printed a usage error.
      return err.exitCode === 0 ? EXIT_OK : EXIT_CANNOT_SCAN;
    }
    deps.io.stderr.write(`${command}: ${errorText(err)}\n`);
    return EXIT_CANNOT_SCAN;
  }
}
