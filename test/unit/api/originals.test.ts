// The recorded-field descriptor table (src/api/originals.ts): one row per family, each checked through the four
// operations derived from the table. A family added to the table without a row here fails the first test.
import { describe, expect, it } from '@jest/globals';
import {
  RECORDED_FIELDS,
  describeOriginals,
  fieldKey,
  isEmptyOriginals,
  mergeOriginals,
  recordedFields,
  validateOriginals,
  withoutFields,
  type Originals,
} from '../../../src/api/originals.js';

interface Row {
  family: string;
  existing: Originals;
  add: Originals;
  /** mergeOriginals(existing, add): entries `existing` holds win. */
  merged: Originals;
  forget: string[];
  /** withoutFields(merged, forget). */
  left: Originals;
  /** The family's property set to this fails validation with `message`. */
  malformed: unknown;
  message: RegExp;
  /** describeOriginals(merged). */
  text: string;
}

const L1 = fieldKey.listenerSource('lbl-1');
const L2 = fieldKey.listenerSource('lbl-2');

const rows: Row[] = [
  {
    family: 'annotations',
    existing: { v: 1, annotations: { a: null } },
    add: { v: 1, annotations: { a: 'x', b: 'y' } },
    merged: { v: 1, annotations: { a: null, b: 'y' } },
    forget: [fieldKey.annotation('a')],
    left: { v: 1, annotations: { b: 'y' } },
    malformed: { a: 1 },
    message: /^annotations\["a"\] must be a string or null$/,
    text: '2 annotation(s)',
  },
  {
    family: 'listeners',
    existing: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 }, 'lbl-2': { keepaliveEnable: 0, keepaliveAdded: 'field' } } },
    add: { v: 1, listeners: { 'lbl-1': { sourceIpType: 1, keepaliveEnable: 1 }, 'lbl-2': { keepaliveEnable: 1 } } },
    merged: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0, keepaliveEnable: 1 }, 'lbl-2': { keepaliveEnable: 0, keepaliveAdded: 'field' } } },
    forget: [L1, fieldKey.keepalive('lbl-2')],
    left: { v: 1, listeners: { 'lbl-1': { keepaliveEnable: 1 } } },
    malformed: { x: { keepaliveAdded: 'everything' } },
    message: /^listeners\["x"\]\.keepaliveAdded must be one of field, healthCheck/,
    text: '2 listener(s)',
  },
  {
    family: 'rules',
    existing: { v: 1, rules: { 'lbl-1/loc-1': { sourceIpType: 0, added: 'rule' } } },
    add: { v: 1, rules: { 'lbl-1/loc-1': { sourceIpType: 1, enableAdded: true }, 'lbl-1/loc-2': { sourceIpType: 0 } } },
    // The recorded rule keeps its value and level; `enable` added later is loopguard's too.
    merged: { v: 1, rules: { 'lbl-1/loc-1': { sourceIpType: 0, added: 'rule', enableAdded: true }, 'lbl-1/loc-2': { sourceIpType: 0 } } },
    forget: [fieldKey.ruleSource('lbl-1', 'loc-2')],
    left: { v: 1, rules: { 'lbl-1/loc-1': { sourceIpType: 0, added: 'rule', enableAdded: true } } },
    malformed: { x: { sourceIpType: 0, enableAdded: 'yes' } },
    message: /^rules\["x"\]\.enableAdded must be a boolean$/,
    text: '2 rule(s)',
  },
  {
    family: 'loadBalancer',
    existing: { v: 1, loadBalancer: { passToTarget: false } },
    add: { v: 1, loadBalancer: { passToTarget: true }, annotations: { a: null } },
    merged: { v: 1, annotations: { a: null }, loadBalancer: { passToTarget: false } },
    forget: [fieldKey.passToTarget()],
    left: { v: 1, annotations: { a: null } },
    malformed: { passToTarget: 'no' },
    message: /^loadBalancer\.passToTarget must be a boolean$/,
    text: '1 annotation(s), LoadBalancerPassToTarget',
  },
  {
    family: 'loadBalancerId',
    existing: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } }, loadBalancerId: 'lb-aaaaaaaa' },
    add: { v: 1, annotations: { a: null }, loadBalancerId: 'lb-bbbbbbbb' },
    merged: { v: 1, annotations: { a: null }, listeners: { 'lbl-1': { sourceIpType: 0 } }, loadBalancerId: 'lb-aaaaaaaa' },
    // Without a CLB-side entry the id names nothing.
    forget: [L1],
    left: { v: 1, annotations: { a: null } },
    malformed: 'LB-1',
    message: /^"loadBalancerId" must be a CLB id/,
    text: '1 listener(s), 1 annotation(s)',
  },
  {
    family: 'envoyProxy',
    existing: { v: 1, annotations: { a: null }, envoyProxy: { namespace: 'shop', name: 'first' } },
    add: { v: 1, annotations: { b: null }, envoyProxy: { namespace: 'shop', name: 'second' } },
    // Where the annotations were first written wins: restores go there.
    merged: { v: 1, annotations: { a: null, b: null }, envoyProxy: { namespace: 'shop', name: 'first' } },
    // Without an annotation entry it names nothing.
    forget: [fieldKey.annotation('a'), fieldKey.annotation('b')],
    left: { v: 1 },
    malformed: { namespace: 'shop' },
    message: /^"envoyProxy" must name a namespace and a name$/,
    text: '2 annotation(s)',
  },
  {
    family: 'declaredAt',
    existing: { v: 1, annotations: { a: null }, declaredAt: '2026-11-20T00:00:00Z' },
    add: { v: 1, declaredAt: '2026-11-22T00:00:00Z' },
    merged: { v: 1, annotations: { a: null }, declaredAt: '2026-11-22T00:00:00Z' },
    // Originals left with no field keep no grace period either.
    forget: [fieldKey.annotation('a')],
    left: { v: 1 },
    malformed: 'yesterday',
    message: /^"declaredAt" must be an RFC 3339 time$/,
    text: '1 annotation(s)',
  },
  {
    family: 'applied',
    existing: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } }, applied: [L1] },
    add: { v: 1, listeners: { 'lbl-2': { sourceIpType: 0 } }, applied: [L2, 'listener/gone/sourceIpType'] },
    // The union, sorted, of fields the result holds.
    merged: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 }, 'lbl-2': { sourceIpType: 0 } }, applied: [L1, L2] },
    forget: [L1],
    left: { v: 1, listeners: { 'lbl-2': { sourceIpType: 0 } }, applied: [L2] },
    malformed: 'all',
    message: /^"applied" must be a list of strings$/,
    text: '2 listener(s)',
  },
];

describe('recorded-field descriptor table', () => {
  it('has one row here per family of the table', () => {
    expect(rows.map((r) => r.family).sort()).toEqual(RECORDED_FIELDS.map((f) => f.name).sort());
  });

  describe.each(rows)('$family', (row) => {
    it('merge keeps the entries existing originals hold and adds the others', () => {
      expect(mergeOriginals(row.existing, row.add)).toEqual(row.merged);
      // Merging into nothing takes `add` as it is (restricted to what it holds).
      expect(validateOriginals(mergeOriginals(undefined, row.add))).toBeUndefined();
    });

    it('forget removes exactly the given fields', () => {
      const left = withoutFields(row.merged, row.forget);
      expect(left).toEqual(row.left);
      expect(recordedFields(left).sort()).toEqual(recordedFields(row.merged).filter((k) => !row.forget.includes(k)).sort());
      // The input is not changed (the executor applies this to the record as read).
      expect(row.merged).toEqual(mergeOriginals(row.existing, row.add));
    });

    it('validate refuses a malformed entry with a sentence naming it, and accepts the merged originals', () => {
      expect(validateOriginals(row.merged)).toBeUndefined();
      expect(validateOriginals({ v: 1, [row.family]: row.malformed })).toMatch(row.message);
    });

    it('describe says what the originals hold', () => {
      expect(describeOriginals(row.merged)).toBe(row.text);
    });
  });

  it('describes in one order whatever the families hold, and empty originals as nothing new', () => {
    const all: Originals = {
      v: 1,
      annotations: { a: null, b: 'x' },
      listeners: { 'lbl-1': { sourceIpType: 0 } },
      rules: { 'lbl-1/loc-1': { sourceIpType: 0 } },
      loadBalancer: { passToTarget: true },
    };
    expect(describeOriginals(all)).toBe('1 listener(s), 1 rule(s), 2 annotation(s), LoadBalancerPassToTarget');
    expect(describeOriginals({ v: 1, loadBalancerId: 'lb-aaaaaaaa', declaredAt: '2026-11-22T00:00:00Z' })).toBe('nothing new');
    expect(isEmptyOriginals({ v: 1, loadBalancerId: 'lb-aaaaaaaa' })).toBe(true);
  });

  it('checks the version before any family', () => {
    expect(validateOriginals({ v: 2, annotations: 'x' })).toBe('unsupported record version (expected "v": 1)');
    expect(validateOriginals(null)).toBe('expected a JSON object');
  });
});

describe('validateOriginals', () => {
  const full: Originals = {
    v: 1,
    annotations: { 'service.cloud.tencent.com/prevent-loopback': null },
    listeners: { 'lbl-1': { sourceIpType: 0 }, 'lbl-2': { keepaliveEnable: 0 } },
    rules: { 'lbl-2/loc-1': { sourceIpType: 0 } },
    loadBalancer: { passToTarget: false },
  };

  it('accepts full originals, with what took effect and when TKE was asked', () => {
    expect(validateOriginals(full)).toBeUndefined();
    expect(validateOriginals({ ...full, applied: ['listener/lbl-1/sourceIpType'], declaredAt: '2026-11-22T10:00:00Z' })).toBeUndefined();
  });

  it.each<[unknown, RegExp]>([
    [[], /JSON object/],
    [{ v: 2 }, /version/],
    [{ v: 1, annotations: [] }, /annotations/],
    [{ v: 1, annotations: { a: 1 } }, /string or null/],
    [{ v: 1, listeners: { x: { sourceIpType: 2 } } }, /sourceIpType must be 0 or 1/],
    [{ v: 1, listeners: { x: { keepaliveEnable: 'on' } } }, /keepaliveEnable/],
    [{ v: 1, listeners: { x: 1 } }, /must be an object/],
    [{ v: 1, rules: { x: {} } }, /rules/],
    [{ v: 1, loadBalancer: { passToTarget: 'no' } }, /passToTarget/],
    [{ v: 1, applied: 'all' }, /applied/],
    [{ v: 1, declaredAt: 'yesterday' }, /declaredAt/],
  ])('rejects %j', (value, error) => {
    expect(validateOriginals(value)).toMatch(error);
  });
});
