import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPERATOR_USER, eventWrites } from '../../bench/apiserver-audit.js';

const line = (id: string, verb: string, resource: string, at: string, user = OPERATOR_USER) =>
  JSON.stringify({ auditID: id, verb, requestReceivedTimestamp: at, objectRef: { resource }, user: { username: user } });

describe('eventWrites', () => {
  it("counts the operator's Event creates and patches once each, from `from` on, with the first and last time", () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-test-'));
    try {
      const log = join(dir, 'audit.log');
      writeFileSync(
        log,
        [
          line('a', 'create', 'events', '2026-11-26T08:00:00.000Z'), // before `from`
          line('b', 'create', 'events', '2026-11-26T08:00:10.000Z'),
          line('b', 'create', 'events', '2026-11-26T08:00:10.000Z'), // the same request at another stage
          line('c', 'patch', 'events', '2026-11-26T08:00:20.000Z'),
          line('d', 'list', 'events', '2026-11-26T08:00:30.000Z'), // a read
          line('e', 'create', 'events', '2026-11-26T08:00:40.000Z', 'system:admin'), // someone else
          line('f', 'patch', 'leases', '2026-11-26T08:00:50.000Z'),
          '',
        ].join('\n'),
      );
      expect(eventWrites(log, Date.parse('2026-11-26T08:00:05Z'))).toEqual({ count: 2, firstMs: Date.parse('2026-11-26T08:00:10Z'), lastMs: Date.parse('2026-11-26T08:00:20Z') });
      expect(eventWrites(join(dir, 'missing.log'))).toEqual({ count: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
