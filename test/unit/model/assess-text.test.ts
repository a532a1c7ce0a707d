// The renderer alone: a decided cause → the exact text users read in status, Events, `loopguard doctor` and the docs.
// Each row pins one message shape in full, with the parts that compose (rule, Blocked, the L7-port note, IPv6).
import { describe, expect, it } from '@jest/globals';
import type { Cause, L4Scene, L7Scene } from '../../../src/model/cause.js';
import { renderCause } from '../../../src/model/cause-text.js';
import { PROFILES, l4Listener, listener } from './fixtures.js';

const TCP = l4Listener('lbl-tcp', 'TCP', 80, 0);

const scene = (extra: Partial<L4Scene> = {}): L4Scene => ({
  lb: 'lb-abc',
  public: false,
  vip: '10.0.0.10',
  profile: PROFILES.ipvsNew,
  listeners: [TCP],
  vipSourced: [TCP],
  servedByL7: [],
  ...extra,
});
const l7 = (extra: Partial<L7Scene> = {}): L7Scene => ({ lb: 'lb-ing', noKeepalive: [listener('lbl-80', 'HTTP', 80)], directAccess: false, ...extra });
const LOOP = "In-cluster calls to VIP 10.0.0.10 reach the CLB with the pod IP (IPVS kube-proxy skips the masquerade for externalTrafficPolicy: Local); the CLB may forward a call to the caller's own node, where it is dropped (L4 does not retry: intermittent failures, total on a one-node cluster).";
const L7_RISK = "private CLB lb-ing forwards in-cluster calls to a node's NodePort with the pod IP as source (no SNAT on listener(s) lbl-80 (HTTP:80)); when it picks the caller's node the call stalls ~4 s while the CLB retries another node, or fails on a one-node cluster.";
const NOTE = ' (ports 443/TCP (HTTPS listener lbl-https) are served by L7 listeners (specify-protocol) and not assessed)';

const rows: [string, Cause, string][] = [
  ['an id that is no CLB id', { id: 'ClbNotFound', lb: 'x', idAnnotation: 'service.kubernetes.io/loadbalance-id', notAnId: 'lb-GZ/../x' }, 'service.kubernetes.io/loadbalance-id is "lb-GZ/../x", which is not a CLB id (lb-…); waiting for TKE to write the id back'],
  ['TKE skip on an Ingress', { id: 'TkeSyncSkipped', kind: 'Ingress' }, "ingress.cloud.tencent.com/mode: skip stops TKE's controller from syncing this Ingress, so loopguard leaves it alone too"],
  ['L4 listeners missing', { id: 'ListenersNotReady', lb: 'lb-abc', missing: ['53/UDP', '54/UDP'] }, 'CLB lb-abc has no listener yet for port(s) 53/UDP, 54/UDP; waiting for TKE'],
  ['L7 listeners missing', { id: 'ListenersNotReady', lb: 'lb-ing' }, "CLB lb-ing has no HTTP/HTTPS listener yet; waiting for TKE's ingress controller"],
  [
    'the plan, loopguard switching first',
    { layer: 'L4', at: scene(), id: 'PodSourceNotMasqueraded', plan: { switchBy: 'loopguard', annotate: true } },
    `${LOOP} Plan: health-check source 100.64.0.0/10, written by loopguard (ModifyListener), then prevent-loopback (switching first keeps health checks passing once kube-proxy binds the VIP; TKE, which switches the source on prevent-loopback too, then finds it done).`,
  ],
  [
    'the plan, nothing to switch: the account default named',
    { layer: 'L4', at: scene({ vipSourced: [] }), id: 'PodSourceNotMasqueraded', plan: { annotate: true } },
    `${LOOP} Plan: prevent-loopback only: every listener already health-checks from 100.64.0.0/10, as the CLB makes new listeners on accounts new to CLB since 2023-02-24 (https://www.tencentcloud.com/document/product/214/53639; loopguard doctor judges this account's default).`,
  ],
  [
    'Blocked comes before the L7-port note',
    {
      layer: 'L4',
      at: scene({ profile: PROFILES.ipvsVersionUnknown, servedByL7: ['443/TCP (HTTPS listener lbl-https)'] }),
      id: 'HealthCheckSourceCapabilityMissing',
      risk: { id: 'KubeProxyVersionUnknown', open: { drop: true }, plan: { annotate: false } },
      rejected: 'InvalidParameter',
    },
    `Whether kube-proxy ipvs latest binds the CLB VIP is unknown. If it binds VIP 10.0.0.10, health checks from it on listener(s) lbl-tcp (TCP:80) are dropped. Set the operator flag --kube-proxy-version (or --kube-proxy-prevent-loopback) so loopguard can decide. Blocked: CLB lb-abc rejected the 100.64.0.0/10 health-check source (InvalidParameter); submit a ticket to enable the CLB "non-VIP health-check source IP" feature for this account${NOTE}`,
  ],
  [
    'IPv6 wraps the rule and its note, then asks to remove the annotation',
    { layer: 'L4', at: scene({ servedByL7: ['443/TCP (HTTPS listener lbl-https)'] }), id: 'Ipv6Clb', risk: { id: 'VipHealthCheckDropped', boundBy: { by: 'Annotation' }, fix: 'Ipv6' }, annotationPresent: true },
    `IPv6 CLB lb-abc cannot use the 100.64.0.0/10 health-check source (IPv4 only), so loopguard cannot mitigate: service.cloud.tencent.com/prevent-loopback is set and kube-proxy ipvs v1.20.6-tke.12 honours it; health checks from VIP 10.0.0.10 on listener(s) lbl-tcp (TCP:80) are dropped and every backend looks dead (the CLB then forwards to all, including broken ones). IPv6 CLBs cannot use the 100.64.0.0/10 source: remove service.cloud.tencent.com/prevent-loopback.${NOTE} Remove service.cloud.tencent.com/prevent-loopback: with an IPv6 CLB it only drops health checks.`,
  ],
  [
    'a drop on a public CLB, seen from all-Dead backends',
    { layer: 'L4', at: scene({ public: true, profile: PROFILES.ipvsOld }), id: 'VipHealthCheckDropped', boundBy: { by: 'DeadBackends', listenerIds: ['lbl-tcp'] }, fix: 'PolicyForbids' },
    'every backend of VIP-sourced listener(s) lbl-tcp is Dead, as when kube-proxy binds the VIP; health checks from VIP 10.0.0.10 on listener(s) lbl-tcp (TCP:80) are dropped and every backend looks dead. Set l4.healthCheckSource: Range100_64 so loopguard switches the source, or remove service.cloud.tencent.com/prevent-loopback.',
  ],
  [
    'kube-proxy too old, Auto',
    { layer: 'L4', at: scene({ profile: PROFILES.ipvsOld }), id: 'KubeProxyTooOld', factor: 'DirectAccessSameNode', always: false, plan: { annotate: false } },
    "In-cluster calls to VIP 10.0.0.10 reach the CLB, which binds pods directly (direct-access) and may forward a call to a backend pod on the caller's own node, where the reply bypasses the CLB and the call fails. kube-proxy ipvs v1.18.4-tke.19 cannot bind the VIP (prevent-loopback): upgrade the kube-system/kube-proxy DaemonSet image to v1.18.4-tke.20 or later. loopguard then sets prevent-loopback (l4.preventLoopback: Auto).",
  ],
  [
    'mode unknown: both questions open, TKE switching',
    { layer: 'L4', at: scene({ profile: PROFILES.unknown }), id: 'KubeProxyModeUnknown', open: { loop: 'PodSourceNotMasqueraded', drop: true }, plan: { switchBy: 'TKE', annotate: false } },
    `The kube-proxy mode is unknown (${PROFILES.unknown.message}). If kube-proxy runs in IPVS mode without binding the VIP, in-cluster calls to VIP 10.0.0.10 can loop back: with externalTrafficPolicy: Local the calls keep the pod IP and the CLB may send them back to the caller's own node. If it binds VIP 10.0.0.10, health checks from it on listener(s) lbl-tcp (TCP:80) are dropped. Set the operator flags --kube-proxy-mode and --kube-proxy-version so loopguard can decide. Plan: health-check source 100.64.0.0/10 switched by TKE, which does so on prevent-loopback; loopguard writes it itself (ModifyListener) only if TKE has not within the grace period.`,
  ],
  [
    'mitigated, several listeners',
    { layer: 'L4', at: scene({ profile: PROFILES.ipvsUpstream, listeners: [TCP, l4Listener('lbl-udp', 'UDP', 53, 1)] }), id: 'LoopbackPrevented', boundBy: { by: 'Upstream' } },
    "kube-proxy answers VIP 10.0.0.10 on every node (kube-proxy ipvs v1.30.2 is an upstream build, which binds every LoadBalancer IP to kube-ipvs0) and this Service's listeners (TCP:80, UDP:53) health-check from 100.64.0.0/10",
  ],
  [
    'L7 plan: pass-to-target first, a config to create, direct-access noted',
    { layer: 'L7', at: l7({ directAccess: true }), id: 'L7Loopback', passFirst: true, config: { name: 'front-auto-ingress-config', source: 'ToBeCreated' } },
    `${L7_RISK} Plan: first the CLB's "allow traffic by default" through ingress.cloud.tencent.com/pass-to-target: "true" (TKE applies it; loopguard writes the CLB only if TKE has not within its grace period), then keepaliveEnable: 1 on each L7 listener through TkeServiceConfig front-auto-ingress-config (created by adding tke-service-config-auto), which TKE applies and keeps; this needs the account's CLB L7 SNAT + keepalive capability (ticket). (direct-access binds pods, not NodePorts; a call can still loop when the backend pod runs on the caller’s node)`,
  ],
  [
    'L7 config conflict',
    { layer: 'L7', at: l7(), id: 'TkeServiceConfigAmbiguous', target: { namespace: 'shop', name: 'front' } },
    `${L7_RISK} Ingress shop/front sets both ingress.cloud.tencent.com/tke-service-config and ingress.cloud.tencent.com/tke-service-config-auto; TKE allows only one: remove one of them.`,
  ],
];

describe('renderCause', () => {
  it.each(rows)('%s', (_name, cause, message) => {
    expect(renderCause(cause).message).toBe(message);
  });

  it('gives advice only from an L7 plan: the declared pass-to-target value, then X-Forwarded-For', () => {
    const advice = renderCause({ layer: 'L7', at: l7({ advice: { pass: { declared: 'false' }, xff: true } }), id: 'L7Loopback', passFirst: false, config: { name: 'c', source: 'Annotation' } }).advice;
    expect(advice).toEqual([
      'ingress.cloud.tencent.com/pass-to-target: "false" declares the CLB\'s "allow traffic by default" and TKE applies it; loopguard does not overrule it: set it to "true", or allow 100.127.0.0/16 in the nodes\' (CVM) security group',
      'with keepalive the CLB no longer passes the client source IP through; backends read it from X-Forwarded-For',
    ]);
    expect(renderCause({ layer: 'L4', at: scene(), id: 'MasqueradedToNodeIp' }).advice).toEqual([]);
  });
});
