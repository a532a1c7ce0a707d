// Events at scale (issue 28 #4): the recorder writes Events at a steady pace in recording order instead of one burst of
// thousands after a first Audit round; recording never waits for the write; deduplication and standing Events still
// hold; shutdown's flush writes what is queued.
import { describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { EVENTS_PER_SECOND, EventRecorder } from '../../src/kube/events.js';
import { createNamespace, kubeConfig } from '../support/kube.js';

describe('EventRecorder pacing', () => {
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);

  it(`writes a burst at ${EVENTS_PER_SECOND}/s in order, without holding up the caller; duplicates bump one Event`, async () => {
    const ns = await createNamespace('events-pace');
    const errors: unknown[] = [];
    const events = new EventRecorder(kc, 'loopguard-pace-test', 10 * 60_000, (e) => errors.push(e));
    const n = 3 * EVENTS_PER_SECOND + 5;
    const started = Date.now();
    for (let i = 0; i < n; i++) await events.record({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: `svc-${String(i).padStart(3, '0')}` }, 'Warning', 'TargetAtRisk', `at risk ${i}`);
    // Recording returned before the writes: they wait in the queue.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(events.pending).toBeGreaterThan(n - EVENTS_PER_SECOND - 1);
    // The same Event again bumps its count (in turn, after the first is written), and a standing one is queued once.
    await events.record({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'svc-000' }, 'Warning', 'TargetAtRisk', 'at risk 0');
    for (let i = 0; i < 5; i++) await events.recordStanding({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'svc-001' }, 'Warning', 'InvalidAnnotation', 'bad value');
    expect(await events.flush(60_000)).toBe(true);
    expect(errors).toEqual([]);

    const list = (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.source?.component === 'loopguard-pace-test');
    const atRisk = list.filter((e) => e.reason === 'TargetAtRisk').sort((a, b) => (a.involvedObject.name ?? '').localeCompare(b.involvedObject.name ?? ''));
    expect(atRisk).toHaveLength(n);
    expect(atRisk[0]?.count).toBe(2);
    expect(list.filter((e) => e.reason === 'InvalidAnnotation').map((e) => e.count)).toEqual([1]);
    // Paced: n writes at EVENTS_PER_SECOND a second take at least (n / rate) - 1 s from the first to the last (a slow
    // apiserver only stretches this). The Events' own times are when they were recorded, all within that first second.
    expect(Date.now() - started).toBeGreaterThanOrEqual((Math.floor(n / EVENTS_PER_SECOND) - 1) * 1_000);
    const recorded = atRisk.map((e) => new Date(e.firstTimestamp as unknown as string).getTime());
    expect(Math.max(...recorded) - Math.min(...recorded)).toBeLessThanOrEqual(2_000);
  }, 90_000);
});
