#!/bin/sh
# Run by the Dockerfile on the production node_modules (POSIX sh: the public build base has no bash guarantee).
# Removes what a running operator never reads, so that the image holds no test and no source map:
#   - type declarations and source maps;
#   - the packages' own tests: test/, tests/, __tests__/ at a package root, *.test.* and *.spec.* files;
#   - the Tencent Cloud SDK's other 260 services and its duplicate ES-module tree (loopguard loads only
#     tencentcloud/common and tencentcloud/services/clb, never the SDK's root; test/integration/image.test.ts
#     runs the image against the CLB emulator);
#   - directories left empty.
set -eu
cd "${1:-node_modules}"
find . -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
  -o -name '*.test.js' -o -name '*.test.cjs' -o -name '*.test.mjs' \
  -o -name '*.spec.js' -o -name '*.spec.cjs' -o -name '*.spec.mjs' \) -delete
find . -type d \( -name test -o -name tests -o -name __tests__ \) -prune -exec sh -c \
  'for d; do if [ -f "$d/../package.json" ]; then rm -rf "$d"; fi; done' sh {} +
sdk=tencentcloud-sdk-nodejs
if [ -d "$sdk/tencentcloud/services/clb" ]; then
  rm -rf "$sdk/es"
  find "$sdk/tencentcloud/services" -mindepth 1 -maxdepth 1 ! -name clb -exec rm -rf {} +
fi
find . -mindepth 1 -type d -empty -delete
