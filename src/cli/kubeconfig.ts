// The kubeconfig `loopguard doctor` talks to, as kubectl picks it: --kubeconfig, else KUBECONFIG, else
// ~/.kube/config; --context, else the current context. Whatever is wrong is one line (exit 2).
import type { KubeConfig } from '@kubernetes/client-node';
import { PooledKubeConfig } from '../kube/pooled-kubeconfig.js';
import { CliError, messageOf } from './errors.js';

export interface KubeconfigChoice {
  kubeconfig?: string;
  context?: string;
}

export interface LoadedKubeconfig {
  kc: KubeConfig;
  /** The context in use and the namespace it names (kubectl's default for -n). */
  context: string;
  namespace?: string;
  server: string;
}

function readKubeconfig(choice: Pick<KubeconfigChoice, 'kubeconfig'>): { kc: KubeConfig; where: string } {
  const kc = new PooledKubeConfig();
  const where = choice.kubeconfig ?? process.env['KUBECONFIG'] ?? '~/.kube/config';
  try {
    if (choice.kubeconfig) kc.loadFromFile(choice.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new CliError(
      `cannot read kubeconfig ${where}: ${messageOf(err)}. Fix: point --kubeconfig or KUBECONFIG at a readable kubeconfig file`,
    );
  }
  return { kc, where };
}

/**
 * The contexts a fleet scan covers: `all` of the kubeconfig's, or the ones named, each of which must exist (a typo
 * is a usage error, not a failed cluster). Names given twice are scanned once.
 */
export function fleetContexts(choice: Pick<KubeconfigChoice, 'kubeconfig'>, wanted: readonly string[] | 'all'): string[] {
  const { kc, where } = readKubeconfig(choice);
  const have = kc.getContexts().map((c) => c.name);
  if (wanted === 'all') {
    if (have.length === 0) throw new CliError(`kubeconfig ${where} has no contexts to scan. Fix: point --kubeconfig or KUBECONFIG at a kubeconfig with contexts`);
    return have;
  }
  const missing = wanted.filter((name) => !have.includes(name));
  if (missing.length > 0) throw new CliError(`kubeconfig ${where} has no context ${missing.map((m) => `"${m}"`).join(', ')} (it has: ${have.join(', ') || 'none'})`);
  return [...new Set(wanted)];
}

export function loadKubeconfig(choice: KubeconfigChoice): LoadedKubeconfig {
  const { kc, where } = readKubeconfig(choice);
  if (choice.context) {
    if (!kc.getContextObject(choice.context)) {
      throw new CliError(`kubeconfig ${where} has no context "${choice.context}" (it has: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(choice.context);
  }
  const contextName = kc.getCurrentContext();
  const cluster = kc.getCurrentCluster();
  // loadFromDefault falls back to an unauthenticated localhost:8080, which is never what a user meant.
  if (!cluster || !contextName || (contextName === 'loaded-context' && cluster.server === 'http://localhost:8080')) {
    throw new CliError(`no cluster to scan: kubeconfig ${where} names no current context. Fix: set KUBECONFIG or --kubeconfig, or pick one with --context`);
  }
  const namespace = kc.getContextObject(contextName)?.namespace;
  return { kc, context: contextName, ...(namespace ? { namespace } : {}), server: cluster.server };
}
