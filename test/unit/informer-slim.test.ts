import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../src/api/loopbackpolicy.js';
import { slim } from '../../src/runtime/informer.js';

const entry = (manager: string) => ({ manager, operation: 'Apply', time: new Date('2026-11-26T00:00:00Z'), fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } });
const object = (...managers: string[]): KubernetesObject => ({ metadata: { name: 'x', managedFields: managers.map(entry) } });

describe('slim: what the caches keep of managedFields', () => {
  it.each([
    { name: 'a target cache keeps only loopguard’s entry', managers: ['kubectl', FIELD_MANAGER, 'tke'], keepOwn: true, kept: [FIELD_MANAGER] },
    { name: 'a target cache without loopguard’s entry keeps none', managers: ['kubectl', 'tke'], keepOwn: true, kept: undefined },
    { name: 'any other cache drops loopguard’s entry too', managers: [FIELD_MANAGER, 'kubectl'], keepOwn: false, kept: undefined },
    { name: 'an empty list goes too', managers: [], keepOwn: true, kept: undefined },
  ])('$name', ({ managers, keepOwn, kept }) => {
    const obj = slim(object(...managers), keepOwn);
    expect(obj.metadata?.managedFields?.map((e) => e.manager)).toEqual(kept);
  });
});
