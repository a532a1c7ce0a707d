// listInPages: a LIST read in pages, each page trimmed before the next is asked for (the start-up memory peak of
// the caches), with client-go's fallback to one whole LIST when the continue token expired.
import { describe, expect, it } from '@jest/globals';
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { listInPages, type ListPage } from '../../src/runtime/informer.js';

const obj = (name: string): KubernetesObject => ({ metadata: { name, annotations: { big: 'x' } } });

/**
 * A fake LIST of `names`, in pages of the asked limit; `fail` answers the nth call (0-based) with that error. `raw`: the
 * token as a custom resource's list carries it (the apiserver's JSON, `continue`), not as client-node deserializes a
 * typed list (`_continue`).
 */
function lister(names: string[], fail?: { call: number; err: unknown }, raw = false) {
  const calls: ListPage[] = [];
  const log: string[] = [];
  const list = async (page: ListPage): Promise<KubernetesListObject<KubernetesObject>> => {
    const n = calls.push(page) - 1;
    log.push(`list ${page._continue ?? (page.limit ? 'first' : 'whole')}`);
    if (fail?.call === n) throw fail.err;
    const from = page._continue ? Number(page._continue) : 0;
    const to = page.limit ? Math.min(from + page.limit, names.length) : names.length;
    const token = to < names.length ? (raw ? { continue: String(to) } : { _continue: String(to) }) : {};
    return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '42', ...token }, items: names.slice(from, to).map(obj) };
  };
  const keep = (o: KubernetesObject) => {
    log.push(`keep ${o.metadata?.name ?? ''}`);
    delete o.metadata?.annotations;
    return o;
  };
  return { list, keep, calls, log };
}

const gone = new ApiException(410, 'Expired', { kind: 'Status', code: 410, reason: 'Expired' }, {});

describe('listInPages', () => {
  it.each([
    { what: 'fewer objects than a page: one request', names: ['a', 'b'], pageSize: 3, requests: [{ limit: 3 }] },
    { what: 'exactly a page: one request', names: ['a', 'b', 'c'], pageSize: 3, requests: [{ limit: 3 }] },
    { what: 'a page and a bit: two requests, the second with the token', names: ['a', 'b', 'c', 'd'], pageSize: 3, requests: [{ limit: 3 }, { limit: 3, _continue: '3' }] },
    { what: 'nothing at all', names: [], pageSize: 3, requests: [{ limit: 3 }] },
  ])('$what', async ({ names, pageSize, requests }) => {
    const l = lister(names);
    const result = await listInPages(l.list, l.keep, pageSize);
    expect(l.calls).toEqual(requests);
    expect(result.items.map((o) => o.metadata?.name)).toEqual(names);
    expect(result.items.every((o) => o.metadata?.annotations === undefined)).toBe(true);
    expect(result.metadata).toEqual({ resourceVersion: '42' });
  });

  it('reads every page of a custom resource list too (its token is `continue`, the JSON as it came)', async () => {
    const l = lister(['a', 'b', 'c', 'd', 'e'], undefined, true);
    const result = await listInPages(l.list, l.keep, 2);
    expect(l.calls).toEqual([{ limit: 2 }, { limit: 2, _continue: '2' }, { limit: 2, _continue: '4' }]);
    expect(result.items.map((o) => o.metadata?.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(result.metadata).toEqual({ resourceVersion: '42' });
  });

  it('trims each page before it asks for the next', async () => {
    const l = lister(['a', 'b', 'c', 'd', 'e'], undefined);
    await listInPages(l.list, l.keep, 2);
    expect(l.log).toEqual(['list first', 'keep a', 'keep b', 'list 2', 'keep c', 'keep d', 'list 4', 'keep e']);
  });

  it('falls back to one whole LIST when the continue token expired (410), keeping nothing of the pages before', async () => {
    const l = lister(['a', 'b', 'c', 'd', 'e'], { call: 1, err: gone });
    const result = await listInPages(l.list, l.keep, 2);
    expect(l.calls).toEqual([{ limit: 2 }, { limit: 2, _continue: '2' }, {}]);
    expect(result.items.map((o) => o.metadata?.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(result.items.every((o) => o.metadata?.annotations === undefined)).toBe(true);
  });

  it.each([
    { what: 'another error on a later page', fail: { call: 1, err: new ApiException(500, 'boom', {}, {}) } },
    { what: 'any error on the first page, 410 too', fail: { call: 0, err: gone } },
  ])('rejects with $what (the informer retries the whole LIST)', async ({ fail }) => {
    const l = lister(['a', 'b', 'c'], fail);
    await expect(listInPages(l.list, l.keep, 2)).rejects.toBe(fail.err);
  });
});
