#!/usr/bin/env bash
# The examples as a user builds them: `npm pack -w engine`, the tarball installed into a fresh
# directory beside the example's own dependencies (never from source paths), a check that none of
# the application's dependencies came with it, then the example's tests on the local PostgreSQL
# (PG_ADMIN_URL). Writes {"passed","failed"} to $1 when given.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
report=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm pack --workspace engine --pack-destination "$work" --silent >/dev/null
tarball=$(ls "$work"/engage-engine-*.tgz)

passed=0
failed=0
for example in "$root"/examples/*/; do
  name=$(basename "$example")
  echo "== example $name"
  cp -r "$example" "$work/$name"
  cd "$work/$name"
  npm install --no-audit --no-fund --silent "$tarball"
  for dep in pino pino-pretty commander cli-progress swagger-ui-dist prom-client csv-parse tsx @electric-sql/pglite; do
    if [ -e "node_modules/$dep" ]; then
      echo "installing @engage/engine brought the application's dependency $dep"
      failed=$((failed + 1))
    fi
  done
  status=0
  node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$work/$name.tap" test/ || status=$?
  passed=$((passed + $(sed -n 's/^# pass //p' "$work/$name.tap")))
  failed=$((failed + $(sed -n 's/^# fail //p' "$work/$name.tap")))
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  cd "$root"
done

echo "examples: $passed passed, $failed failed"
if [ -n "$report" ]; then echo "{\"passed\": $passed, \"failed\": $failed}" >"$report"; fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
