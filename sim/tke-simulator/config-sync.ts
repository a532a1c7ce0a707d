// Applying a Service's/Ingress's TkeServiceConfig to its CLB (docs/tencent-cloud.md §1): keep the auto config
// in step with the listeners, then send the writes `planConfigSync` asks for. A write CLB rejects becomes a
// Warning Event on the owner, quoting CLB's code and message, as TKE does; the next resync tries again.
import type { Listener } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { mergeAutoConfigSpec } from './auto-config.js';
import type { ClbError } from './clb-api.js';
import { isTransient } from './clb-api.js';
import { healthChecksWithoutEnable, refusalMessage } from './health-check-enable.js';
import type { ClbModification, SyncInput } from './config-plan.js';
import { planConfigSync } from './config-plan.js';
import type { SimulatorContext } from './context.js';
import { jsonEqual } from './json.js';
import type { Owner } from './kube-api.js';
import { ownerReference } from './kube-api.js';
import type { ClbHandle } from './load-balancer.js';
import type { ConfigChoice, ConfigOwnerKind, TkeServiceConfigSpec } from './tke-service-config.js';
import { autoConfigName } from './tke-service-config.js';

export const REASON_SYNC_FAILED = 'SyncLoadBalancerFailed';
export const REASON_CONFIG_INVALID = 'TkeServiceConfigInvalid';
export const REASON_CONFIG_NOT_FOUND = 'TkeServiceConfigNotFound';

export interface ConfigSyncInput {
  kind: ConfigOwnerKind;
  owner: Owner;
  component: string;
  choice: ConfigChoice;
  lb: ClbHandle;
  listeners: Listener[];
  forceL4SourceIpType?: number;
  /** Sync scope `all` (see `SyncInput.ownL4`). */
  ownL4?: SyncInput['ownL4'];
}

const apiVersionOf = (kind: ConfigOwnerKind): string => (kind === 'Service' ? 'v1' : 'networking.k8s.io/v1');

export function warn(ctx: SimulatorContext, input: Pick<ConfigSyncInput, 'kind' | 'owner' | 'component'>, reason: string, message: string): Promise<void> {
  return ctx.events.record(
    { kind: input.kind, apiVersion: apiVersionOf(input.kind), metadata: input.owner.metadata },
    input.component,
    'Warning',
    reason,
    message,
  );
}

/** "<Action> <lb>/<where> failed: Code=..., Message=..." — no RequestId, so repeats aggregate into one Event. */
export function describeFailure(action: string, lbId: string, where: string, err: ClbError): string {
  return `${action} ${lbId} ${where} failed: Code=${err.code}, Message=${err.detail}`;
}

async function ensureAutoConfig(ctx: SimulatorContext, input: ConfigSyncInput, name: string): Promise<TkeServiceConfigSpec> {
  const namespace = input.owner.metadata?.namespace ?? '';
  const existing = await ctx.kube.getConfig(namespace, name);
  const spec = mergeAutoConfigSpec(existing?.spec, {
    listeners: input.listeners,
    vip: input.lb.vip,
    ...(input.forceL4SourceIpType !== undefined ? { forceL4SourceIpType: input.forceL4SourceIpType } : {}),
  });
  if (!existing) {
    await ctx.kube.createConfig(namespace, name, spec, ownerReference(input.kind, input.owner), input.kind);
  } else if (!jsonEqual(existing.spec, spec)) {
    await ctx.kube.replaceConfigSpec(existing, spec, input.kind);
  }
  return spec;
}

async function resolveSpec(ctx: SimulatorContext, input: ConfigSyncInput): Promise<TkeServiceConfigSpec | undefined> {
  const { choice } = input;
  switch (choice.kind) {
    case 'none':
      return undefined;
    case 'invalid':
      await warn(ctx, input, REASON_CONFIG_INVALID, choice.reason);
      return undefined;
    case 'auto':
      return ensureAutoConfig(ctx, input, choice.name);
    case 'manual': {
      const config = await ctx.kube.getConfig(input.owner.metadata?.namespace ?? '', choice.name);
      if (!config) await warn(ctx, input, REASON_CONFIG_NOT_FOUND, `TkeServiceConfig ${choice.name} not found`);
      return config?.spec;
    }
  }
}

async function send(ctx: SimulatorContext, m: ClbModification): Promise<void> {
  if (m.action === 'ModifyListener') await ctx.clb.modifyListener(m.request);
  else await ctx.clb.modifyRule(m.request);
}

/** Applies the config; throws only for transient failures (so the queue retries soon). */
export async function syncConfig(ctx: SimulatorContext, input: ConfigSyncInput): Promise<void> {
  const spec = await resolveSpec(ctx, input);
  // Reading `refused` of a healthCheck without its required `enable`: none of the config is applied (assumption,
  // health-check-enable.ts); the Event repeats at every sync until the config is fixed.
  const missing = ctx.missingHealthCheckEnable === 'refused' ? healthChecksWithoutEnable(spec) : [];
  if (missing.length > 0 && (input.choice.kind === 'auto' || input.choice.kind === 'manual')) {
    await warn(ctx, input, REASON_SYNC_FAILED, refusalMessage(input.choice.name, missing));
    return;
  }
  const modifications = planConfigSync({
    loadBalancerId: input.lb.id,
    vip: input.lb.vip,
    listeners: input.listeners,
    spec,
    ...(input.forceL4SourceIpType !== undefined ? { forceL4SourceIpType: input.forceL4SourceIpType } : {}),
    ...(input.ownL4 ? { ownL4: input.ownL4 } : {}),
    missingEnable: ctx.missingHealthCheckEnable,
  });
  let transient: unknown;
  for (const m of modifications) {
    try {
      await send(ctx, m);
      ctx.log(`${m.action} ${input.lb.id} ${m.target} applied`);
    } catch (err) {
      if (isTransient(err)) transient ??= err;
      else await warn(ctx, input, REASON_SYNC_FAILED, describeFailure(m.action, input.lb.id, m.target, err as ClbError));
    }
  }
  if (transient) throw transient;
}

/** Auto configs are cascade-deleted with their owner; the test apiserver runs no GC, so delete explicitly. */
export async function deleteAutoConfig(ctx: SimulatorContext, kind: ConfigOwnerKind, owner: Owner): Promise<void> {
  const namespace = owner.metadata?.namespace ?? '';
  const name = autoConfigName(kind, owner.metadata?.name ?? '');
  const config = await ctx.kube.getConfig(namespace, name);
  if (!config) return;
  if (!(config.metadata?.ownerReferences ?? []).some((r) => r.uid === owner.metadata?.uid)) return;
  await ctx.kube.deleteConfig(namespace, name);
}
