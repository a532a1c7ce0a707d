// Disruptions of the test ground's control plane for chaos tests: etcd compaction (so every resourceVersion a
// client holds is expired: its next watch gets 410 Gone and it must relist) and an audit log of what one user
// asked the apiserver (to see the relists). Both act on a control plane this process started (ControlPlaneState).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlaneState } from './launcher.js';

/** The etcd client URL the apiserver was started with. */
export function etcdUrl(state: ControlPlaneState): string {
  const arg = state.apiserver.args.find((a) => a.startsWith('--etcd-servers='));
  if (!arg) throw new Error('the apiserver was started without --etcd-servers');
  return arg.slice('--etcd-servers='.length).split(',')[0] ?? '';
}

async function etcdCall<T>(state: ControlPlaneState, path: string, body: unknown): Promise<T> {
  // etcd's gRPC gateway (JSON over HTTP, keys base64): no etcdctl needed.
  const res = await fetch(`${etcdUrl(state)}/v3/${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * Writes a key outside the apiserver's prefix (so the revision moves past anything any client has seen) and
 * compacts etcd at that revision. Every resourceVersion handed out before is then gone from etcd, and from a
 * restarted apiserver's watch cache: a watch resumed from one is answered 410 Gone. Returns the revision.
 */
export async function compactEtcd(state: ControlPlaneState): Promise<number> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const put = await etcdCall<{ header: { revision: string } }>(state, 'kv/put', { key: b64('/loopguard-chaos/compaction'), value: b64(String(Date.now())) });
  const revision = Number(put.header.revision);
  await etcdCall(state, 'kv/compaction', { revision: String(revision), physical: true });
  return revision;
}

export interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  stageTimestamp: string;
}

/**
 * Makes the apiserver's next start (restartApiserver) keep a JSON audit log of `user`'s list and watch requests,
 * at Metadata level and only once each completes. Returns the log's path.
 */
export function auditListsAndWatches(state: ControlPlaneState, user: string): string {
  const policy = join(state.dir, 'audit-policy.yaml');
  const log = join(state.dir, 'audit.log');
  writeFileSync(
    policy,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived, ResponseStarted]',
      'rules:',
      `- {level: Metadata, users: ["${user}"], verbs: [list, watch]}`,
      '- {level: None}',
      '',
    ].join('\n'),
  );
  const args = state.apiserver.args.filter((a) => !a.startsWith('--audit-'));
  state.apiserver.args = [...args, `--audit-policy-file=${policy}`, `--audit-log-path=${log}`, '--audit-log-format=json', '--audit-log-maxbackup=1'];
  return log;
}

export function readAuditLog(path: string): AuditEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}
