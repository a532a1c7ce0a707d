// configViewOf: the TkeServiceConfig governing an Ingress, found by namespace and name in one lookup (a round looks
// up one per Ingress; src/controllers/policy/gather.ts passes the informer cache's get, the CLI an index).
import { describe, expect, it } from '@jest/globals';
import { configLookupOf, configViewOf, type ConfigObject } from '../../../src/plan/snapshot.js';
import { ingress, service } from '../model/fixtures.js';

const NAMED = 'ingress.cloud.tencent.com/tke-service-config';
const AUTO = 'ingress.cloud.tencent.com/tke-service-config-auto';
const config = (namespace: string, name: string, spec: unknown = { loadBalancer: { l7Listeners: [] } }): ConfigObject => ({ metadata: { namespace, name }, spec });
const configs = [config('shop', 'keepalive', { mine: true }), config('other', 'keepalive', { theirs: true }), config('shop', 'front-auto-ingress-config', { auto: true })];

describe('configViewOf over a listing (configLookupOf)', () => {
  it.each([
    { name: 'the named config of the Ingress’s namespace', target: ingress({}, { [NAMED]: 'keepalive' }), view: { name: 'keepalive', spec: { mine: true }, exists: true } },
    { name: 'not another namespace’s config of that name', target: ingress({ namespace: 'third' }, { [NAMED]: 'keepalive' }), view: { name: 'keepalive', exists: false } },
    { name: 'the auto config when the auto annotation is on', target: ingress({}, { [AUTO]: 'true' }), view: { name: 'front-auto-ingress-config', spec: { auto: true }, exists: true } },
    { name: 'a named config that does not exist yet', target: ingress({}, { [NAMED]: 'missing' }), view: { name: 'missing', exists: false } },
    { name: 'no config named, no auto: none governs', target: ingress(), view: undefined },
    { name: 'a Service: configs govern Ingresses here', target: service({}, { 'service.cloud.tencent.com/tke-service-config': 'keepalive' }), view: undefined },
  ])('$name', ({ target, view }) => {
    expect(configViewOf(target, configLookupOf(configs))).toEqual(view);
  });

  it('looks up once per target, by namespace and name', () => {
    const asked: string[] = [];
    configViewOf(ingress({}, { [NAMED]: 'keepalive' }), (ns, name) => (asked.push(`${ns}/${name}`), undefined));
    configViewOf(ingress(), (ns, name) => (asked.push(`${ns}/${name}`), undefined));
    expect(asked).toEqual(['shop/keepalive']);
  });
});
