// `npm run gen:admission`: writes config/components/admission-warnings' ValidatingAdmissionPolicy and binding, and the chart's template,
// from src/admission (the CEL and the messages come from the model's texts). test/unit/admission.test.ts fails when
// the committed files differ from what this writes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from '../src/admission/render.js';

const root = join(fileURLToPath(import.meta.url), '../..');
for (const [path, text] of Object.entries(generatedFiles())) {
  writeFileSync(join(root, path), text);
  console.log(`wrote ${path}`);
}
