/**
 * The SDK's own description of CLB responses, read from `clb_models.d.ts` with the TypeScript compiler API, and a
 * checker that holds a JSON value to it. The emulator must answer as the real API does, and the .d.ts is the
 * closest thing to a schema Tencent publishes (tencent-cloud.md §3): every interface is a set of fields with a primitive,
 * `Array<…>` or interface type, and a doc comment that says "此字段可能返回 null" when the API may return null.
 *
 * What the checker reports, with a JSON path each:
 * - a field the interface does not have (an invented name);
 * - a value of the wrong JSON type;
 * - `null` in a field whose doc does not say it may be null (an array element is never nullable);
 * - a required field (no `?`) that is missing.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import ts from 'typescript';

export interface FieldModel {
  name: string;
  optional: boolean;
  /** The doc comment says the API may return null. */
  nullable: boolean;
  type: TypeModel;
  doc: string;
}

export type TypeModel =
  | { kind: 'string' | 'number' | 'boolean' }
  | { kind: 'array'; element: TypeModel }
  | { kind: 'ref'; name: string }
  | { kind: 'union'; options: TypeModel[] };

export type Models = ReadonlyMap<string, ReadonlyMap<string, FieldModel>>;

const NULL_NOTE = /可能返回\s*null|may return null/i;

/** Resolved through Node so the test reads the very copy of the SDK the emulator's clients load. */
export function clbModelsPath(): string {
  const require = createRequire(import.meta.url);
  return require.resolve('tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.d.ts');
}

function typeOf(node: ts.TypeNode, where: string): TypeModel {
  switch (node.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { kind: 'string' };
    case ts.SyntaxKind.NumberKeyword:
    case ts.SyntaxKind.BigIntKeyword: // the SDK's `number | bigint` for big ids: a JSON number either way
      return { kind: 'number' };
    case ts.SyntaxKind.BooleanKeyword:
      return { kind: 'boolean' };
    case ts.SyntaxKind.ArrayType:
      return { kind: 'array', element: typeOf((node as ts.ArrayTypeNode).elementType, where) };
    case ts.SyntaxKind.UnionType:
      return { kind: 'union', options: (node as ts.UnionTypeNode).types.map((t) => typeOf(t, where)) };
    case ts.SyntaxKind.TypeReference: {
      const ref = node as ts.TypeReferenceNode;
      const name = ref.typeName.getText();
      const [arg] = ref.typeArguments ?? [];
      if (name === 'Array' && arg) return { kind: 'array', element: typeOf(arg, where) };
      return { kind: 'ref', name };
    }
    default:
      // A construct this reader does not know must fail loudly, not be waved through.
      throw new Error(`${where}: unsupported type ${ts.SyntaxKind[node.kind]} (${node.getText()})`);
  }
}

function docOf(member: ts.Node): string {
  return ts
    .getJSDocCommentsAndTags(member)
    .map((d) => d.getText())
    .join('\n');
}

export function loadModels(path = clbModelsPath()): Models {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const models = new Map<string, Map<string, FieldModel>>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    const fields = new Map<string, FieldModel>();
    for (const member of node.members) {
      if (!ts.isPropertySignature(member) || !member.type) throw new Error(`${node.name.text}: unsupported member ${member.getText()}`);
      const name = member.name.getText();
      const doc = docOf(member);
      fields.set(name, {
        name,
        optional: member.questionToken !== undefined,
        nullable: NULL_NOTE.test(doc),
        type: typeOf(member.type, `${node.name.text}.${name}`),
        doc,
      });
    }
    models.set(node.name.text, fields);
  });
  return models;
}

function describeType(t: TypeModel): string {
  if (t.kind === 'union') return t.options.map(describeType).join(' | ');
  return t.kind === 'array' ? `Array<${describeType(t.element)}>` : t.kind === 'ref' ? t.name : t.kind;
}

function checkValue(models: Models, value: unknown, type: TypeModel, nullable: boolean, path: string, problems: string[]): void {
  if (value === null) {
    if (!nullable) problems.push(`${path}: null, but the model does not say it may return null`);
    return;
  }
  switch (type.kind) {
    case 'string':
    case 'number':
    case 'boolean':
      if (typeof value !== type.kind) problems.push(`${path}: ${JSON.stringify(value)} is not a ${type.kind}`);
      return;
    case 'array':
      if (!Array.isArray(value)) {
        problems.push(`${path}: ${JSON.stringify(value)} is not an ${describeType(type)}`);
        return;
      }
      value.forEach((item, i) => checkValue(models, item, type.element, false, `${path}[${i}]`, problems));
      return;
    case 'ref':
      checkObject(models, value, type.name, path, problems);
      return;
    case 'union': {
      // Conforms when one option accepts it; otherwise report against the first option's problems.
      const attempts = type.options.map((option) => {
        const found: string[] = [];
        checkValue(models, value, option, nullable, path, found);
        return found;
      });
      if (!attempts.some((found) => found.length === 0)) problems.push(`${path}: ${JSON.stringify(value)} is not a ${describeType(type)}`);
    }
  }
}

/** Every problem of `value` against interface `name`; empty when it conforms. */
export function checkObject(models: Models, value: unknown, name: string, path: string = name, problems: string[] = []): string[] {
  const fields = models.get(name);
  if (!fields) {
    problems.push(`${path}: the SDK has no interface ${name}`);
    return problems;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path}: ${JSON.stringify(value)} is not a ${name} object`);
    return problems;
  }
  const record = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(record)) {
    const field = fields.get(key);
    if (!field) {
      problems.push(`${path}.${key}: ${name} has no field ${key}`);
      continue;
    }
    checkValue(models, v, field.type, field.nullable, `${path}.${key}`, problems);
  }
  for (const field of fields.values()) {
    if (!field.optional && record[field.name] === undefined) problems.push(`${path}.${field.name}: required by ${name}, missing`);
  }
  return problems;
}

/** The fields of `name` whose doc limits them to HTTP health checks and allows null (HttpCode, HttpCheckPath, …). */
export function httpOnlyNullableFields(models: Models, name = 'HealthCheck'): string[] {
  const fields = models.get(name);
  if (!fields) throw new Error(`the SDK has no interface ${name}`);
  return [...fields.values()]
    .filter((f) => f.nullable && /仅适用于HTTP\/HTTPS|CheckType的值取HTTP时/.test(f.doc))
    .map((f) => f.name);
}
