// The model stays readable by construction: no function in src/model over 80 lines (issue 39 #6). Decisions that
// outgrow it are split where they branch, as the assessment's are (facts → situation → plan → cause → text).
import { expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const MAX_LINES = 80;
const DIR = join(process.cwd(), 'src/model');

/** Every function, method and arrow function in a source text longer than `max` lines: `file name lines`. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const name = node.name?.getText(source) ?? '(anonymous)';
      if (lines > max) found.push(`${file} ${name} ${lines}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it('finds a long function (the check can fail)', () => {
  const body = Array.from({ length: 5 }, (_, i) => `  const x${i} = ${i};`).join('\n');
  expect(longFunctions('x.ts', `function f() {\n${body}\n}\nconst g = () => 1;`, 5)).toEqual(['x.ts f 7']);
});

it(`has no function over ${MAX_LINES} lines in src/model`, () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(20);
  expect(files.flatMap((f) => longFunctions(f, readFileSync(join(DIR, f), 'utf8'), MAX_LINES))).toEqual([]);
});
