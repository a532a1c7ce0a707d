// A table of objects the apiserver must refuse (the admission suites' invalid policies), sent as a user sends a file
// of them: one `kubectl apply -f -` of a stream of documents. kubectl applies each and prints each refusal as its own
// "Error from server …" entry, in the documents' order: the apiserver's message, naming the object (a field the
// schema does not know: the kind only). Not a List: kubectl validates a List's items itself, against its copy of the
// schema, and stops at the first unknown field with its own message, which is not what a user applying the object
// reads. One process for a table instead of one per row: each `kubectl apply` costs about 0.3 s of CPU, and the two
// admission tables hold about 100 rows (docs/development.md, fourteenth session).
import { expect } from '@jest/globals';
import { kubectl } from './kube.js';

export interface RefusedRow {
  manifest: { kind: string; metadata: { name: string } };
  /**
   * Sent on its own with `kubectl create`: `apply` keeps the whole object in an annotation of at most 256 KiB, so an
   * object over that is refused for the annotation before its spec is looked at.
   */
  create?: boolean;
}

/**
 * Applies `objects` (each must be refused) in one `kubectl apply -f -` and returns kubectl's entry for each, in order.
 * Throws when kubectl exits 0 or prints another number of refusals than objects: a row accepted, or an answer that is
 * not the apiserver's, fails every row of the table with kubectl's whole output.
 */
async function applyRefused(objects: ReadonlyArray<object>): Promise<string[]> {
  const r = await kubectl(['apply', '-f', '-'], { input: objects.map((o) => JSON.stringify(o)).join('\n---\n') });
  const entries = r.stderr.split(/^(?=Error from server )/m).filter((e) => e.startsWith('Error from server '));
  if (r.code === 0 || entries.length !== objects.length) {
    throw new Error(`expected ${objects.length} refusals from one kubectl apply, got exit ${r.code} and ${entries.length}:\n${r.stdout}\n${r.stderr}`);
  }
  return entries.map((e) => e.trimEnd());
}

/**
 * Checks row i of `rows()` (called once, when the first row is checked: by then the suite's namespace exists): the
 * rows sent with `apply` go together, a `create` row on its own, and each refusal must read as a user needs it to:
 * the apiserver's (422 Invalid naming the object, or 400 for a field the schema does not know), with every fragment
 * the row expects, no CEL rule printed in place of its message and no megabyte of input echoed back.
 */
export function refusalTable(rows: () => readonly RefusedRow[]): (i: number, fragments: readonly string[]) => Promise<void> {
  let table: readonly RefusedRow[] | undefined;
  let applied: Promise<string[]> | undefined;
  const refusalOf = async (row: RefusedRow, all: readonly RefusedRow[]): Promise<string> => {
    if (row.create) {
      const r = await kubectl(['create', '-f', '-'], { input: JSON.stringify(row.manifest) });
      expect(r.code).not.toBe(0);
      return r.stderr;
    }
    const sent = all.filter((r) => !r.create);
    applied ??= applyRefused(sent.map((r) => r.manifest));
    return (await applied)[sent.indexOf(row)]!;
  };
  return async (i, fragments) => {
    const all = (table ??= rows());
    const row = all[i]!;
    const message = await refusalOf(row, all);
    if (message.includes('strict decoding error')) expect(message).toContain('strict decoding error: unknown field');
    else expect(message).toMatch(new RegExp(`${row.manifest.kind}(\\.loopguard\\.dev)? "${escape(row.manifest.metadata.name)}" is invalid`));
    for (const f of fragments) expect(message).toContain(f);
    expect(message).not.toContain('failed rule');
    expect(message.length).toBeLessThan(2_000);
  };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
