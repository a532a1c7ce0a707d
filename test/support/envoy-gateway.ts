// The real Envoy Gateway controller for the Gateway test: scripts/envoy-gateway/build.sh builds
// github.com/envoyproxy/gateway/cmd/envoy-gateway at its pinned version from the Go module proxy into
// ~/.cache/loopguard/envoy-gateway/<version>, with the Gateway API and Envoy Gateway CRDs of that module beside it
// (only the first run builds; .ci/run does it in its own stage). No skip: the facts docs/gateways.md rests on are
// measured here, so a machine that cannot build it fails the suite, naming the command.
//
// startEnvoyGateway runs `envoy-gateway server` with only what a cluster would give its Deployment: a config file,
// ENVOY_GATEWAY_NAMESPACE, a kubeconfig (admin: the chart's ClusterRole is wider than this test cares about) and
// the certgen certificates at /certs (test/support/envoy-gateway-jail.sh says how, and why in a namespace of its own).
// The test control plane runs no kubelet, so the envoy Deployment EG creates never gets a pod: EG needs none to
// create the Service.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type CustomObjectsApi } from '@kubernetes/client-node';
import { REPO_ROOT } from '../controlplane/crds.js';
import { kubeConfig, kubeconfigPath, kubectl } from './kube.js';
import { startProcessGroup, type ProcessGroup } from './process-group.js';

const BUILD = join(REPO_ROOT, 'scripts', 'envoy-gateway', 'build.sh');
const JAIL = join(REPO_ROOT, 'test', 'support', 'envoy-gateway-jail.sh');
/** Where the apiserver relay listens inside EG's network namespace. */
const RELAY_PORT = 6443;

export interface EnvoyGatewayTools {
  /** The cache directory: `envoy-gateway` and crds/. */
  dir: string;
  binary: string;
  crds: string;
  /** The pinned version, from the cache directory's name. */
  version: string;
}

export function envoyGatewayTools(suite: string): EnvoyGatewayTools {
  const built = spawnSync('bash', [BUILD], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 40 * 60_000 });
  if (built.status !== 0) {
    const reason = `${built.stderr ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new Error(`${suite}: the Envoy Gateway controller could not be built (exit ${built.status ?? built.signal}); run \`bash scripts/envoy-gateway/build.sh\`:\n${reason}`);
  }
  const dir = built.stdout.trim().split('\n').pop() ?? '';
  return { dir, binary: join(dir, 'envoy-gateway'), crds: join(dir, 'crds'), version: dir.split('/').pop() ?? '' };
}

export interface EnvoyGatewayProcess {
  logs(): string;
  stop(): Promise<void>;
}

export interface EnvoyGatewayOptions {
  binary: string;
  /** ENVOY_GATEWAY_NAMESPACE: where EG keeps the infrastructure it generates for Gateways. */
  namespace: string;
  /** The GatewayClass controllerName this EG serves. */
  controllerName: string;
}

/** The EnvoyGateway config (the chart's envoy-gateway-config ConfigMap), cut to what a single test process needs. */
function envoyGatewayConfig(controllerName: string): string {
  return JSON.stringify({
    apiVersion: 'gateway.envoyproxy.io/v1alpha1',
    kind: 'EnvoyGateway',
    gateway: { controllerName },
    provider: {
      type: 'Kubernetes',
      kubernetes: {
        // One process; no Lease to wait for.
        leaderElection: { disable: true },
        // Its webhook would need a Service the apiserver can call; it only mutates envoy pods, which never start here.
        topologyInjector: { disable: true },
      },
    },
    logging: { level: { default: 'info' } },
  });
}

/** The admin kubeconfig, its server moved to the relay inside EG's network namespace. */
function relayedKubeconfig(): { text: string; apiserver: { host: string; port: number } } {
  const kc = kubeConfig();
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  const exported = JSON.parse(kc.exportConfig()) as { clusters: { cluster: { server: string } }[] };
  for (const c of exported.clusters) c.cluster.server = `https://127.0.0.1:${RELAY_PORT}`;
  return { text: JSON.stringify(exported), apiserver: { host: server.hostname, port: Number(server.port || 443) } };
}

export async function startEnvoyGateway(options: EnvoyGatewayOptions): Promise<EnvoyGatewayProcess> {
  const work = mkdtempSync(join(tmpdir(), 'lg-envoy-gateway-'));
  const open = new Set<Socket>();
  let relay: Server | undefined;
  let tool: ProcessGroup | undefined;
  // Everything it started, whatever step failed: EG and the relay in its namespace (one process group), the relay's
  // connections and socket, the work directory (the tmpfs root went with the mount namespace).
  const stop = async (): Promise<void> => {
    await tool?.stop();
    for (const s of open) s.destroy();
    if (relay) await new Promise<void>((resolve) => relay!.close(() => resolve()));
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const home = join(work, 'home');
    const root = join(work, 'root');
    mkdirSync(root);
    // As the chart's certgen Job: `envoy-gateway certgen` creates the control plane's Secrets (envoy-gateway, envoy,
    // envoy-rate-limit, envoy-oidc-hmac) in EG's namespace (no topology injector webhook to patch: see the config
    // above); the Deployment mounts envoy-gateway at /certs, as here.
    const certgen = spawnSync(options.binary, ['certgen', '--disable-topology-injector'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env['PATH'] ?? '', HOME: home, KUBECONFIG: kubeconfigPath(), ENVOY_GATEWAY_NAMESPACE: options.namespace },
    });
    if (certgen.status !== 0) throw new Error(`envoy-gateway certgen failed: ${certgen.stderr}${certgen.stdout}`);
    const certs = join(work, 'certs');
    mkdirSync(certs);
    const secret = await kubeConfig().makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: options.namespace, name: 'envoy-gateway' });
    for (const [file, data] of Object.entries(secret.data ?? {})) writeFileSync(join(certs, file), Buffer.from(data, 'base64'), { mode: 0o600 });
    const config = join(work, 'envoy-gateway.yaml');
    writeFileSync(config, envoyGatewayConfig(options.controllerName));
    const { text, apiserver } = relayedKubeconfig();
    const kubeconfig = join(work, 'kubeconfig');
    writeFileSync(kubeconfig, text, { mode: 0o600 });

    const socket = join(work, 'apiserver.sock');
    const server = createServer((c) => {
      const upstream = createConnection(apiserver.port, apiserver.host);
      for (const s of [c, upstream]) {
        open.add(s);
        s.on('close', () => open.delete(s));
      }
      c.pipe(upstream).pipe(c);
      upstream.on('error', () => c.destroy());
      c.on('error', () => upstream.destroy());
    });
    relay = server;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));

    // Up once its Kubernetes provider has synced its caches and reconciles (its first pass logs this line).
    tool = await startProcessGroup({
      what: 'Envoy Gateway',
      command: 'bash',
      args: [JAIL, root, certs, socket, String(RELAY_PORT), '--', options.binary, 'server', '--config-path', config],
      cwd: work,
      env: { PATH: process.env['PATH'] ?? '', HOME: home, NODE: process.execPath, KUBECONFIG: kubeconfig, ENVOY_GATEWAY_NAMESPACE: options.namespace },
      ready: /\breconciling gateways\b/,
      timeoutMs: 120_000,
      tail: 6000,
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { logs: tool.logs, stop };
}

/**
 * What Tencent's practice guide sets up before any Gateway: an EnvoyProxy `tke` in EG's namespace with the Service
 * settings every Gateway of the class gets (`envoyService`: annotations, externalTrafficPolicy), and a GatewayClass
 * whose parametersRef names it, served by the EG started with `controllerName`.
 */
export async function createGatewayClass(
  custom: CustomObjectsApi,
  options: { namespace: string; className: string; controllerName: string; envoyService: Record<string, unknown> },
): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: 'gateway.envoyproxy.io',
    version: 'v1alpha1',
    plural: 'envoyproxies',
    namespace: options.namespace,
    body: {
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'EnvoyProxy',
      metadata: { name: 'tke' },
      spec: { provider: { type: 'Kubernetes', kubernetes: { envoyService: options.envoyService } } },
    },
  });
  await custom.createClusterCustomObject({
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    plural: 'gatewayclasses',
    body: {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: options.className },
      spec: { controllerName: options.controllerName, parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'tke', namespace: options.namespace } },
    },
  });
}

/**
 * Takes the Gateway API and Envoy Gateway CRDs a suite installed off the shared apiserver, and waits until they are
 * gone: a CRD still terminating refuses creates, so a later run of the Gateway suite on this control plane (an
 * existing cluster's, or `npm run cluster:up`'s) would fail. EG, stopped by now, leaves its finalizers on the objects
 * (the GatewayClass's gateway-exists finalizer): with them the CRDs would never go, so they are taken off first.
 */
export async function removeCrds(crds: readonly string[]): Promise<void> {
  // One `kubectl get` of every kind and one `kubectl patch -f` of the objects that hold finalizers (kubectl finds each
  // object's resource from its kind), not one of each per CRD and object: about 30 runs fewer per suite.
  const listed = await kubectl(['get', crds.join(','), '-A', '-o', 'json']);
  if (listed.code !== 0) throw new Error(`listing the Gateway objects: ${listed.stderr}`);
  const held = (JSON.parse(listed.stdout) as { items: { metadata?: { finalizers?: string[] } }[] }).items.filter((o) => (o.metadata?.finalizers ?? []).length > 0);
  if (held.length > 0) {
    const patched = await kubectl(['patch', '-f', '-', '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: held }) });
    if (patched.code !== 0) throw new Error(`taking the finalizers off the Gateway objects: ${patched.stderr}`);
  }
  const deleted = await kubectl(['delete', 'crd', '--wait=true', '--timeout=120s', ...crds], { timeoutMs: 130_000 });
  if (deleted.code !== 0) throw new Error(`deleting the Gateway CRDs: ${deleted.stderr}`);
}
