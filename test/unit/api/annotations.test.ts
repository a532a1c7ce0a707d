import { describe, expect, it } from '@jest/globals';
import { readBool, readEnum, readJson, readSkip, readString, valueOr } from '../../../src/api/annotations.js';

const K = 'example.com/k';

describe('readBool', () => {
  it.each([
    [undefined, { kind: 'absent' }],
    ['true', { kind: 'value', value: true }],
    ['false', { kind: 'value', value: false }],
    [' True ', { kind: 'value', value: true }],
    ['FALSE', { kind: 'value', value: false }],
  ])('%j', (raw, expected) => {
    expect(readBool(raw === undefined ? {} : { [K]: raw }, K)).toEqual(expected);
  });

  it.each(['yes', '1', '', 'truee'])('%j is invalid, with a sentence for an Event', (raw) => {
    const r = readBool({ [K]: raw }, K);
    expect(r.kind).toBe('invalid');
    if (r.kind === 'invalid') {
      expect(r.raw).toBe(raw);
      expect(r.error).toContain(K);
      expect(r.error).toContain('expected "true" or "false"');
    }
  });

  it('accepts undefined annotations', () => {
    expect(readBool(undefined, K)).toEqual({ kind: 'absent' });
  });
});

describe('readString / readEnum / valueOr', () => {
  it('reads strings, including empty ones', () => {
    expect(readString({ [K]: '' }, K)).toEqual({ kind: 'value', value: '' });
    expect(readString({}, K)).toEqual({ kind: 'absent' });
  });
  it('reads enums case-insensitively and canonicalises', () => {
    expect(readEnum({ [K]: 'SKIP' }, K, ['skip', 'sync'] as const)).toEqual({ kind: 'value', value: 'skip' });
    const bad = readEnum({ [K]: 'later' }, K, ['skip', 'sync'] as const);
    expect(bad.kind).toBe('invalid');
  });
  it('falls back on absent or invalid values', () => {
    expect(valueOr(readBool({ [K]: 'nah' }, K), false)).toBe(false);
    expect(valueOr(readBool({ [K]: 'true' }, K), false)).toBe(true);
  });
});

describe('readJson', () => {
  it('reports bad JSON without throwing, truncating long values', () => {
    const raw = `{"a": ${'x'.repeat(200)}`;
    const r = readJson({ [K]: raw }, K, () => undefined);
    expect(r.kind).toBe('invalid');
    if (r.kind === 'invalid') {
      expect(r.error).toMatch(/not valid JSON/);
      expect(r.error.length).toBeLessThan(250);
    }
  });
  it('runs the shape check', () => {
    expect(readJson({ [K]: '[1]' }, K, (v) => (Array.isArray(v) ? 'no arrays' : undefined)).kind).toBe('invalid');
    expect(readJson({ [K]: '{"a":1}' }, K, () => undefined)).toEqual({ kind: 'value', value: { a: 1 } });
  });
});

describe('readSkip', () => {
  it.each<[Record<string, string>, 'Service' | 'Ingress', string | undefined, number]>([
    [{}, 'Service', undefined, 0],
    [{ 'loopguard.dev/skip': 'true' }, 'Service', 'loopguard', 0],
    [{ 'loopguard.dev/skip': 'false' }, 'Ingress', undefined, 0],
    [{ 'loopguard.dev/skip': 'yes' }, 'Service', 'loopguard', 1],
    [{ 'service.cloud.tencent.com/mode': 'skip' }, 'Service', 'tke', 0],
    [{ 'service.cloud.tencent.com/mode': 'Skip' }, 'Service', 'tke', 0],
    [{ 'service.cloud.tencent.com/mode': 'skip' }, 'Ingress', undefined, 0],
    [{ 'ingress.cloud.tencent.com/mode': 'skip' }, 'Ingress', 'tke', 0],
    [{ 'ingress.cloud.tencent.com/mode': 'sync' }, 'Ingress', undefined, 0],
  ])('%j on a %s', (annotations, kind, skipped, problems) => {
    const r = readSkip(annotations, kind);
    expect(r.skipped).toBe(skipped);
    expect(r.problems).toHaveLength(problems);
  });
});
