// A table of objects the apiserver must refuse (the admission suites' invalid policies), sent as a user sends a file
// of them: one `kubectl apply -f -` of a stream of documents. kubectl applies each and prints each refusal as its own
// "Error from server …" entry, in the documents' order: the apiserver's message, naming the object (a field the
// schema does not know: the kind only). Not a List: kubectl validates a List's items itself, against its copy of the
// schema, and stops at the first unknown field with its own message, which is not what a user applying the object
// reads. One process for a table instead of one per row: each `kubectl apply` costs about 0.3 s of CPU, and the two
// admission tables send 135 rows with apply (docs/development.md, fourteenth session). kubectl prints a refusal of a
// single object in another form ("The LoopbackPolicy "n" is invalid: …"); the tables' `create` rows still show it.
import { beforeAll, expect } from '@jest/globals';
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
  // A GET and a POST per object: more than kubectl()'s default minute on a loaded machine.
  const r = await kubectl(['apply', '-f', '-'], { input: objects.map((o) => JSON.stringify(o)).join('\n---\n'), timeoutMs: 180_000 });
  const entries = r.stderr.split(/^(?=Error from server )/m).filter((e) => e.startsWith('Error from server '));
  if (r.code === 0 || entries.length !== objects.length) {
    // Every row fails with this: kept short, naming what was accepted (kubectl's "created" lines).
    throw new Error(`expected ${objects.length} refusals from one kubectl apply, got exit ${r.code} and ${entries.length}; accepted: ${r.stdout.trim() || 'none'}; stderr begins: ${r.stderr.slice(0, 1500)}`);
  }
  return entries.map((e) => e.trimEnd());
}

/**
 * Sends the table once, in a `beforeAll` of the calling `describe` (after the file's own, which make the namespace
 * `rows` may name): the rows sent with `apply` together, each `create` row on its own. Returns the check of row i: its
 * refusal must read as a user needs it to: the apiserver's (422 Invalid naming the object; for a field the schema does
 * not know, 400 naming the kind), with every fragment the row expects, no CEL rule printed in place of its message and
 * no megabyte of input echoed back. A table that could not be sent (a row accepted) fails every row, not the describe.
 */
export function refusalTable(rows: () => readonly RefusedRow[]): (i: number, fragments: readonly string[]) => void {
  let table: readonly RefusedRow[] = [];
  let refusals: Array<string | Error> | Error = new Error('the table was not sent');
  beforeAll(async () => {
    table = rows();
    const applied = applyRefused(table.filter((r) => !r.create).map((r) => r.manifest));
    const created = table.map(async (row) => {
      if (!row.create) return undefined;
      const r = await kubectl(['create', '-f', '-'], { input: JSON.stringify(row.manifest) });
      return r.code === 0 ? new Error(`kubectl create accepted ${row.manifest.kind} ${row.manifest.metadata.name}`) : r.stderr;
    });
    try {
      const [sent, one] = await Promise.all([applied, Promise.all(created)]);
      let next = 0;
      refusals = one.map((c) => (c === undefined ? sent[next++]! : c));
    } catch (err) {
      refusals = err instanceof Error ? err : new Error(String(err));
    }
  }, 240_000);
  return (i, fragments) => {
    if (refusals instanceof Error) throw refusals;
    const message = refusals[i]!;
    if (message instanceof Error) throw message;
    const { kind, metadata } = table[i]!.manifest;
    // Which answer is expected comes from the row, not from the message: a field the schema does not know is a 400
    // naming the kind; anything else a 422 naming the object.
    if (fragments.some((f) => f.startsWith('unknown field'))) {
      expect(message).toMatch(new RegExp(`\\b${kind} in version "[^"]+" cannot be handled as an? ${kind}: strict decoding error: unknown field`));
    } else {
      expect(message).toMatch(new RegExp(`\\b${kind}(\\.loopguard\\.dev)? "${escapeRegExp(metadata.name)}" is invalid`));
    }
    for (const f of fragments) expect(message).toContain(f);
    expect(message).not.toContain('failed rule');
    expect(message.length).toBeLessThan(2_000);
  };
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
