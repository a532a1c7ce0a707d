// Pure: the rules for a CLB that serves several Services (issue 22 #2; the facts they rest on and why each holds:
// docs/execution.md "Shared CLBs"). A bound VIP drops every health check on the CLB that comes from it, whoever's
// target it serves: prevent-loopback is set (or kept) only when every other check on the CLB comes from 100.64.0.0/10
// or another Service binds the VIP already, else the target is Conflict / SharedClb (sharedClbAssessment); a release
// never puts a source back on a VIP another Service keeps bound (vipStaysBound, planL4Release) and waits on nobody.
// Names cross no namespace (issue 22 #9): Services of another namespace are counted, never named.
import { readBool, ServiceAnnotation } from '../api/annotations.js';
import { assessment, type Assessment } from '../model/assessment-result.js';
import { sourceIpTypeOf } from '../model/desired-state.js';
import { matchServiceListeners } from '../model/assess-service.js';
import { L4_PROTOCOLS, targetKey, type ClbFacts, type TargetFacts } from '../model/facts.js';
import { annotatedByLoopguard } from './originals.js';
import type { SharedUser, Snapshot, TargetSnapshot } from './snapshot.js';

const PREVENT_LOOPBACK = ServiceAnnotation.PreventLoopback;

/** Names shown in a message; the rest are counted. */
const MAX_NAMED = 5;

/** `<CLB id>/<listener id>`: a listener this plan switches to 100.64.0.0/10. */
export function listenerKey(loadBalancerId: string, listenerId: string): string {
  return `${loadBalancerId}/${listenerId}`;
}

/** The listeners a set of assessments switches to 100.64.0.0/10 (the plan's own switches). */
export function switchedBy(assessments: readonly Assessment[]): Set<string> {
  const out = new Set<string>();
  for (const a of assessments) {
    if (a.desired?.layer !== 'L4') continue;
    for (const c of a.changes) if (c.action === 'SetListenerHealthCheckSource' && c.to === 1) out.add(listenerKey(a.desired.loadBalancerId, c.listenerId));
  }
  return out;
}

/**
 * Whether `f` binds the VIP: a LoadBalancer Service carrying prevent-loopback whose status shows one of `vips`. kube-proxy
 * binds the addresses in status, which only TKE writes; the annotations (the CLB id included) are a namespace user's
 * to write, so a Service that merely names another's CLB binds nothing, and must not keep that target's sources off
 * their originals on release (docs/security.md).
 */
function bindsVip(f: TargetFacts, vips: ReadonlySet<string>): boolean {
  const v = readBool(f.annotations, PREVENT_LOOPBACK);
  return f.kind === 'Service' && f.type === 'LoadBalancer' && v.kind === 'value' && v.value && (f.loadBalancerIps ?? []).some((ip) => vips.has(ip));
}

export interface BinderContext {
  /** The CLB's addresses as read (with the target's own status addresses, they identify the VIP). */
  vips?: readonly string[];
  /** Targets whose prevent-loopback loopguard takes off in this same plan: they bind nothing once it runs. */
  releasing?: ReadonlySet<string>;
}

/** The other Services on `loadBalancerId` that keep its VIP bound (bindsVip), apart from those released with it. */
export function otherBinders(s: Pick<Snapshot, 'shared'>, self: TargetFacts, loadBalancerId: string | undefined, c: BinderContext = {}): SharedUser[] {
  if (!loadBalancerId) return [];
  const key = targetKey(self);
  const vips = new Set([...(self.loadBalancerIps ?? []), ...(c.vips ?? [])]);
  // A Gateway's own Service carries the prevent-loopback the Gateway's EnvoyProxy gives it: the Gateway's, not another's.
  const own = self.kind === 'Gateway' ? `Gateway ${self.namespace}/${self.name}` : undefined;
  return (s.shared.clbs.get(loadBalancerId) ?? []).filter(
    (u) => targetKey(u.facts) !== key && !c.releasing?.has(targetKey(u.facts)) && bindsVip(u.facts, vips) && !(own && u.facts.kind === 'Service' && u.facts.generatedFor === own),
  );
}

/**
 * The `label` (`namespace/name`) of the ones in `namespace`, the rest of them counted after `and`, and a count of the
 * others (of `kind`): nothing of another namespace is named.
 */
export function namesIn(namespace: string, users: readonly SharedUser[], kind = 'Service', label = (u: SharedUser) => `${u.facts.namespace}/${u.facts.name}`, and = ', '): string {
  const here = users.filter((u) => u.facts.namespace === namespace);
  const elsewhere = users.length - here.length;
  const more = here.length > MAX_NAMED ? `${and}${here.length - MAX_NAMED} more` : '';
  const parts = [`${here.slice(0, MAX_NAMED).map(label).join(', ')}${more}`].filter((x) => x);
  if (elsewhere > 0) parts.push(`${elsewhere} ${kind}(s) in other namespaces`);
  return parts.join(', ');
}

/** What a release keeps on 100.64.0.0/10, and why (the plan's text); undefined when the target is the last one out. */
export function vipStaysBound(s: Pick<Snapshot, 'shared'>, self: TargetFacts, loadBalancerId: string | undefined, c: BinderContext = {}): string | undefined {
  const binders = otherBinders(s, self, loadBalancerId, c);
  if (binders.length === 0) return undefined;
  return `kept on 100.64.0.0/10, originals forgotten: ${namesIn(self.namespace, binders)} on CLB ${loadBalancerId ?? ''} still carr${binders.length === 1 ? 'ies' : 'y'} prevent-loopback, which keeps the VIP bound on every node`;
}

/** A health check on the CLB whose source is the VIP: an L4 listener's, or an L7 rule's (`locationId`). */
interface VipCheck {
  listenerId: string;
  locationId?: string;
}

function checksFromVip(h: { healthSwitch?: number; sourceIpType?: number } | undefined): boolean {
  return h?.healthSwitch !== 0 && sourceIpTypeOf(h?.sourceIpType) === 0;
}

/**
 * Every (enabled) health check on the CLB that comes from the VIP: L4 listeners' and L7 rules' alike. A bound VIP
 * drops both (an Ingress can share a user-brought CLB with Services); an L7 rule is switched only through its
 * TkeServiceConfig, by TKE, so it counts as switched once a read shows it.
 */
function vipSourced(clb: ClbFacts): VipCheck[] {
  const out: VipCheck[] = [];
  for (const l of clb.listeners) {
    if (L4_PROTOCOLS.has(l.protocol)) {
      if (checksFromVip(l.healthCheck)) out.push({ listenerId: l.listenerId });
    } else {
      for (const r of l.rules ?? []) if (checksFromVip(r.healthCheck)) out.push({ listenerId: l.listenerId, locationId: r.locationId });
    }
  }
  return out;
}

/**
 * Who each check serves: the Services on the CLB whose ports its listener matches, and for L7 rules the Ingresses on
 * the CLB (TKE gives an Ingress its own L7 listeners); the rest serve nothing loopguard sees.
 */
function servedBy(clb: ClbFacts, users: readonly SharedUser[], checks: readonly VipCheck[]): { services: SharedUser[]; ingresses: SharedUser[]; unattributed: number } {
  const l4 = new Set(checks.filter((c) => c.locationId === undefined).map((c) => c.listenerId));
  const services: SharedUser[] = [];
  const attributed = new Set<string>();
  for (const u of users) {
    if (u.facts.kind !== 'Service') continue;
    const mine = matchServiceListeners(u.facts, clb).matched.filter((l) => l4.has(l.listenerId));
    if (mine.length === 0) continue;
    services.push(u);
    for (const l of mine) attributed.add(l.listenerId);
  }
  const rules = checks.length - l4.size;
  const ingresses = rules > 0 ? users.filter((u) => u.facts.kind === 'Ingress') : [];
  return { services, ingresses, unattributed: l4.size - attributed.size + (ingresses.length > 0 ? 0 : rules) };
}

/**
 * The target's verdict when prevent-loopback would bind a VIP other listeners still health-check from; undefined when
 * the rule holds nothing back. Only a Service loopguard would annotate now, or whose prevent-loopback loopguard set,
 * is concerned (a user's own annotation is the user's: loopguard never removes it). `switched`: the listeners the
 * plan's targets switch to 100.64.0.0/10 in this pass. The executor runs targets concurrently and a switch may fail,
 * so another target's switch is not counted as done: the annotation waits for the next pass (no verdict change).
 */
export function sharedClbAssessment(s: Snapshot, t: TargetSnapshot, assessed: Assessment, switched: ReadonlySet<string>): Assessment | undefined {
  const desired = assessed.desired?.layer === 'L4' ? assessed.desired : undefined;
  if (!desired || t.clb.state !== 'Found' || t.facts.kind !== 'Service') return undefined;
  const adding = assessed.changes.some((c) => c.action === 'AddPreventLoopbackAnnotation');
  const ownOriginals = t.ownership?.owner === s.owner ? t.ownership.originals : undefined;
  const holding = desired.preventLoopback.desired && desired.preventLoopback.present && annotatedByLoopguard(ownOriginals, PREVENT_LOOPBACK);
  if (!adding && !holding) return undefined;
  const clb = t.clb.clb;
  const binders = otherBinders(s, t.facts, clb.loadBalancerId, { vips: clb.vips ?? [] });
  // A check of another binder's own listener, while a policy manages that Service, is that policy's: the Service's own
  // prevent-loopback drops it whatever this one does, and its policy switches it. In a sync-all world TKE puts such a
  // listener back on the VIP for a moment while two policies converge, before it sees that Service's annotation;
  // counted here, it made this Service give its prevent-loopback back and take it again a round later, its own
  // listeners on the bound VIP at TKE's next sync meanwhile (docs/execution.md "Shared CLBs"). A binder nothing
  // manages (opted out, or no policy selects it) still counts: nothing will switch its listener, and two bindings
  // loopguard set would otherwise hold each other for good while that check is dropped.
  const managed = binders.filter((u) => u.policy !== undefined && !u.optedOut).map((u) => u.facts);
  const own = new Set([t.facts, ...managed].flatMap((f) => (f.kind === 'Service' ? matchServiceListeners(f, clb).matched.map((l) => l.listenerId) : [])));
  const others = vipSourced(clb).filter((c) => c.locationId !== undefined || !own.has(c.listenerId));
  if (others.length === 0) return undefined;
  // Another Service keeps the VIP bound whatever this one does, by its user's prevent-loopback: this one's binds
  // nothing more (one VIP, bound once), and it is what makes TKE hold this Service's own listeners on 100.64.0.0/10
  // (tencent-cloud.md §9 #1, #2); without it, a TKE that puts back its view at each sync gives them the VIP source on
  // a bound VIP (every check dropped), and loopguard, correcting that, would write against TKE at every drift check.
  // A binding loopguard set does not count: two of them would justify each other for good while a third Service's
  // checks on the VIP fail; each is held back here instead, in its own policy's pass.
  if (binders.some((u) => !u.annotatedByLoopguard)) return undefined;
  const left = others.filter((c) => c.locationId !== undefined || !switched.has(listenerKey(clb.loadBalancerId, c.listenerId)));
  // Without annotation, nobody asks TKE to switch: loopguard writes the own sources itself.
  const withheld = {
    ...desired,
    sourceBy: desired.preventLoopback.present ? desired.sourceBy : ('loopguard' as const),
    preventLoopback: { ...desired.preventLoopback, desired: false },
  };
  const changes = assessed.changes.filter((c) => c.action !== 'AddPreventLoopbackAnnotation');
  if (left.length === 0) {
    // Every one of them is switched in this pass by a target of this policy: prevent-loopback in the next pass.
    if (!adding) return undefined;
    return { ...assessed, desired: withheld, changes, rootCause: { ...assessed.rootCause, message: `${assessed.rootCause.message} prevent-loopback follows in the next pass, once the other listeners on CLB ${clb.loadBalancerId} switched in this one are on 100.64.0.0/10.` } };
  }
  const users = (s.shared.clbs.get(clb.loadBalancerId) ?? []).filter((u) => targetKey(u.facts) !== targetKey(t.facts));
  const { services, ingresses, unattributed } = servedBy(clb, users, left);
  const served = [...services, ...ingresses];
  // The VIP is not bound by another Service. While a policy manages every Service and Ingress those checks serve, they
  // are on their way to 100.64.0.0/10 (each policy switches its own): the own listeners are switched meanwhile, so that
  // the CLB converges whichever policy plans first. Otherwise nothing will switch them, and a source loopguard held on
  // 100.64.0.0/10 without prevent-loopback is one a TKE that puts back its view at each sync gives the VIP again
  // (its view is the VIP's until the annotation is there): loopguard would correct it at every drift check, a write
  // fight, for nothing (a VIP nobody binds drops no check). Then the own listeners are left as TKE has them; one
  // loopguard switched is given back, after its prevent-loopback, in the safe order (planL4Target's partial release).
  const converging = unattributed === 0 && served.every((u) => u.policy !== undefined && !u.optedOut);
  const own64 = converging ? withheld : { ...withheld, listeners: withheld.listeners.map(({ desiredSourceIpType: _, ...l }) => l) };
  const named = [services.length > 0 ? `of ${namesIn(t.facts.namespace, services)}` : '', ingresses.length > 0 ? `L7 rules of ${namesIn(t.facts.namespace, ingresses, 'Ingress')}` : '', unattributed > 0 ? `${unattributed} serving nothing loopguard sees` : ''].filter((x) => x);
  const inOther = served.some((u) => u.facts.namespace !== t.facts.namespace);
  const cover = inOther
    ? 'a LoopbackPolicy in their namespace, or a cluster-scoped LoopbackPolicy, that manages them'
    : served.length > 0
      ? 'bring them under this LoopbackPolicy (or one that manages them)'
      : "switch them to 100.64.0.0/10 (HealthCheck.SourceIpType 1: ModifyListener for a listener, ModifyRule or its Ingress's TkeServiceConfig for a rule)";
  return assessment(assessed.target, {
    loadBalancerId: clb.loadBalancerId,
    rootCause: 'SharedClb',
    warnings: assessed.warnings,
    mitigations: assessed.mitigations,
    // prevent-loopback is not added, and one loopguard added is given back (annotation first: planL4Target's partial
    // release); the own listeners are switched only while the CLB converges (above).
    desired: own64,
    changes: converging ? changes : changes.filter((c) => c.action !== 'SetListenerHealthCheckSource'),
    blockers: assessed.blockers,
    message:
      `CLB ${clb.loadBalancerId} also serves ${left.length} health check(s) from the VIP (${named.join('; ')}): prevent-loopback binds the whole VIP on every node, which would drop their health checks, so loopguard ${holding ? 'takes back its' : 'does not set'} prevent-loopback on this Service ` +
      `and ${converging ? "only switches this Service's own listeners to 100.64.0.0/10" : "leaves this Service's own listeners as TKE has them (no check fails on a VIP nobody binds, and without prevent-loopback TKE would put back a source loopguard switched)"}. To cover them: ${cover}; once every listener on the CLB health-checks from 100.64.0.0/10, loopguard sets prevent-loopback (this Service's own finding: ${assessed.rootCause.id})`,
  });
}
