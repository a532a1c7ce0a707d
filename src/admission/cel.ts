// Pure: small CEL builders for the admission policy, reading annotations the way src/api/annotations.ts does.
export const q = (s: string): string => JSON.stringify(s);
export const annotation = (key: string): string => `variables.annotations[${q(key)}]`;
export const has = (key: string): string => `${q(key)} in variables.annotations`;
/** readBool's `true`: case and surrounding space tolerated. */
export const isTrue = (key: string): string => `(${has(key)} && ${annotation(key)}.trim().lowerAscii() == "true")`;
export const nonEmpty = (key: string): string => `(${has(key)} && ${annotation(key)}.trim() != "")`;
