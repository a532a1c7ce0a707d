// A table of objects the apiserver must refuse, sent as a user sends a file of them: one `kubectl apply -f -` of a
// stream of documents. kubectl applies each and prints each refusal as its own "Error from server …" entry, in the
// documents' order: the apiserver's message, naming the object (a field the schema does not know: the kind only).
// Not a List: kubectl validates a List's items on the client, against its copy of the schema, and stops at the first
// unknown field or wrong type with its own message, which is not what a user applying the object sees. One process
// for a table instead of one per row: each `kubectl apply` costs about 0.3 s of CPU, and the two admission tables
// hold about 100 rows (docs/development.md, fourteenth session).
import { kubectl } from './kube.js';

/**
 * Applies `objects` (each must be refused) in one `kubectl apply -f -` and returns kubectl's entry for each, in order.
 * Throws when kubectl exits 0 or prints another number of refusals than objects: a row accepted, or an answer that is
 * not the apiserver's, fails every row of the table with kubectl's whole output.
 */
export async function applyRefused(objects: ReadonlyArray<object>): Promise<string[]> {
  const r = await kubectl(['apply', '-f', '-'], { input: objects.map((o) => JSON.stringify(o)).join('\n---\n') });
  const entries = r.stderr.split(/^(?=Error from server )/m).filter((e) => e.startsWith('Error from server '));
  if (r.code === 0 || entries.length !== objects.length) {
    throw new Error(`expected ${objects.length} refusals from one kubectl apply, got exit ${r.code} and ${entries.length}:\n${r.stdout}\n${r.stderr}`);
  }
  return entries.map((e) => e.trimEnd());
}
