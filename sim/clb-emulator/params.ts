import { ApiError, formatError, missingParameter, rangeError } from './errors.js';

/**
 * Typed readers for request parameters. Wrong JSON types are `InvalidParameter.FormatError`, absent required
 * ones `MissingParameter`, and parameters an action does not model are `UnknownParameter` (Tencent's common code
 * for unrecognised parameters) — rejecting them keeps a client from passing tests by relying on something the
 * emulator would silently ignore.
 */
export type Params = Record<string, unknown>;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function allowOnly(params: Params, allowed: readonly string[], prefix = ''): void {
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) {
      throw new ApiError(
        'UnknownParameter',
        `The parameter \`${prefix}${key}\` is not recognized (or not modelled by the CLB emulator).`,
      );
    }
  }
}

export function optString(p: Params, name: string, label = name): string | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw formatError(label, 'a string');
  return v;
}

export function reqString(p: Params, name: string, label = name): string {
  const v = optString(p, name, label);
  if (v === undefined || v === '') throw missingParameter(label);
  return v;
}

export function optInt(p: Params, name: string, label = name): number | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw formatError(label, 'an integer');
  return v;
}

export function optIntInRange(p: Params, name: string, min: number, max: number, label = name): number | undefined {
  const v = optInt(p, name, label);
  if (v !== undefined && (v < min || v > max)) throw rangeError(label, v, `[${min}, ${max}]`);
  return v;
}

export function optBool(p: Params, name: string, label = name): boolean | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw formatError(label, 'a boolean');
  return v;
}

export function optEnum<T extends string>(p: Params, name: string, values: readonly T[], label = name): T | undefined {
  const v = optString(p, name, label);
  if (v === undefined) return undefined;
  if (!(values as readonly string[]).includes(v)) {
    throw new ApiError('InvalidParameterValue', `The value \`${v}\` of \`${label}\` is invalid; expected one of ${values.join('|')}.`);
  }
  return v as T;
}

/** 0/1 switches (`HealthSwitch`, `KeepaliveEnable`, `SourceIpType`): other values are `InvalidParameterValue`. */
export function optSwitch(p: Params, name: string, label = name): number | undefined {
  const v = optInt(p, name, label);
  if (v !== undefined && v !== 0 && v !== 1) {
    throw new ApiError('InvalidParameterValue', `The value \`${v}\` of \`${label}\` is invalid; expected 0 or 1.`);
  }
  return v;
}

export function optArray(p: Params, name: string, maxLength: number, label = name): unknown[] | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw formatError(label, 'an array');
  if (v.length > maxLength) {
    throw new ApiError('InvalidParameterValue.Length', `The length of \`${label}\` exceeds the limit of ${maxLength}.`);
  }
  return v;
}

export function optStringArray(p: Params, name: string, maxLength: number, label = name): string[] | undefined {
  const v = optArray(p, name, maxLength, label);
  if (v === undefined) return undefined;
  return v.map((item, i) => {
    if (typeof item !== 'string') throw formatError(`${label}.${i}`, 'a string');
    return item;
  });
}

export function reqStringArray(p: Params, name: string, maxLength: number, label = name): string[] {
  const v = optStringArray(p, name, maxLength, label);
  if (v === undefined || v.length === 0) throw missingParameter(label);
  return v;
}

export function optObject(p: Params, name: string, label = name): Params | undefined {
  const v = p[name];
  if (v === undefined) return undefined;
  if (!isRecord(v)) throw formatError(label, 'an object');
  return v;
}
