// The layering of src/ (docs/architecture.md "Pipeline and layers"), checked over the import graph: no import
// cycle, and no import from a lower layer to a higher one. Type-only imports count: they tie the modules'
// meanings together as much as value imports do.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/**
 * Bottom first. A module may import its own folder and any lower layer; folders sharing a layer are siblings and
 * do not import each other (the CLI and the controllers are two front ends over the same pure pipeline).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['api', 'version.ts'],
  ['model'],
  ['cloud'],
  ['runtime'],
  ['kube'],
  // The loopback probe agent (docs/probe.md): below plan and the controllers, which will read its reports.
  ['probe'],
  ['plan'],
  ['mitigation'],
  ['controllers', 'cli'],
  // The admission policy's generator and its parameter object's writer: it reuses the offline planner (cli).
  ['admission'],
  ['operator.ts'],
  ['main.ts'],
];

type Graph = ReadonlyMap<string, readonly string[]>;

/** The top folder of a path under src/ (or the file itself at the top). */
function unit(file: string): string {
  return file.split('/')[0] as string;
}

function layerOf(file: string): number {
  return LAYERS.findIndex((l) => l.includes(unit(file)));
}

/** Imports that run against the layering: upward, or between sibling folders of one layer. */
export function upwardImports(graph: Graph): string[] {
  const out: string[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      if (unit(from) === unit(to)) continue;
      const a = layerOf(from);
      const b = layerOf(to);
      if (b > a) out.push(`${from} → ${to} (upward: ${unit(to)} is above ${unit(from)})`);
      else if (b === a) out.push(`${from} → ${to} (siblings: ${unit(from)} and ${unit(to)} share a layer)`);
    }
  }
  return out;
}

/** Every import cycle, as its strongly connected component (Tarjan). */
export function importCycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

const SRC = join(process.cwd(), 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** src/'s import graph, paths relative to src/ (`cloud/errors.ts`); packages are left out. */
function srcGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
    const deps = importedFiles
      .map((f) => f.fileName)
      .filter((f) => f.startsWith('.'))
      .map((f) => relative(SRC, normalize(join(dirname(file), f.replace(/\.js$/, '.ts')))));
    graph.set(relative(SRC, file), deps);
  }
  return graph;
}

describe('the checks themselves', () => {
  it('find a cycle, an upward import and a sibling import', () => {
    const graph = new Map([
      ['cloud/errors.ts', ['cloud/error-codes.ts']],
      ['cloud/error-codes.ts', ['cloud/errors.ts', 'model/facts.ts']],
      ['model/facts.ts', ['plan/l4.ts']],
      ['plan/l4.ts', []],
      ['cli/scan.ts', ['controllers/policy/round.ts']],
      ['controllers/policy/round.ts', ['plan/l4.ts']],
    ]);
    expect(importCycles(graph)).toEqual([['cloud/error-codes.ts', 'cloud/errors.ts']]);
    expect(upwardImports(graph)).toEqual([
      'model/facts.ts → plan/l4.ts (upward: plan is above model)',
      'cli/scan.ts → controllers/policy/round.ts (siblings: cli and controllers share a layer)',
    ]);
  });
});

describe('src/ import graph', () => {
  const graph = srcGraph();

  it('places every top-level folder and file of src/ in a layer', () => {
    const unplaced = [...new Set([...graph.keys()].map(unit))].filter((u) => layerOf(u) < 0);
    expect(unplaced).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('has no import from a lower layer to a higher one, nor between siblings', () => {
    expect(upwardImports(graph)).toEqual([]);
  });
});
