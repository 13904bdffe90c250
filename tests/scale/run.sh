#!/usr/bin/env bash
# The test suite on the real components of a scaled-out deployment (docs/scaling.md):
#
#   bash tests/scale/run.sh pgbouncer RESULT_DIR   # every HTTP test through PgBouncer (transaction
#                                                  # pooling), DATABASE_PREPARE=0; then a server
#                                                  # and the CLI without it (tests/scale/pooler.test.ts)
#   bash tests/scale/run.sh replica RESULT_DIR     # every HTTP test with reads on a streaming
#                                                  # replica, then tests/scale/replicas.test.ts
#
# Starts what it needs on ports of its own (tests/scale/pgbouncer.sh, tests/scale/replica.sh), stops
# it on exit, and writes vitest's JSON reports into RESULT_DIR. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

mode=${1:?pgbouncer or replica}
out=${2:?a directory for the JSON reports}
mkdir -p "$out"

# Tests of what no pooler or replica changes: parsing, compiling, types, documents, browsers, the
# statements' plans (citus-ready); the CLI and the README's PostgreSQL path, whose run through
# PgBouncer tests/scale/pooler.test.ts covers; overload.test.ts, which counts prepared statements
# and lock waits on the pool's own backends; the tests on clusters of their own (database-restart, reliability/connection-loss); and
# the 20,000 generated requests of reliability/requests, whose contract the suite's own tests hold
# through the pooler and the replica.
SKIP=(parse compile registry types openapi-lint openapi docs-page readme readme-postgres embedding-guide citus-ready
  cli cli-failures overload database-restart reliability/connection-loss reliability/requests)
# suite REPORT [MORE_TO_SKIP...]
suite() {
  local report=$1 excluded=()
  shift
  for name in "${SKIP[@]}" "$@"; do excluded+=(--exclude "tests/$name.test.ts"); done
  npx vitest run "${excluded[@]}" --reporter=dot --reporter=json --outputFile.json="$report"
}

case "$mode" in
  pgbouncer)
    source tests/scale/pgbouncer.sh
    trap pgbouncer_stop EXIT
    pgbouncer_start
    echo "== tests through PgBouncer ($PGBOUNCER_URL, pool_mode=transaction)"
    DATABASE_URL="$PGBOUNCER_URL/postgres" DATABASE_PREPARE=0 suite "$out/pgbouncer.json"
    echo "== a server and the CLI through PgBouncer without DATABASE_PREPARE=0"
    PGBOUNCER_URL="$PGBOUNCER_URL" npx vitest run --config tests/scale/vitest.config.ts tests/scale/pooler.test.ts \
      --reporter=default --reporter=json --outputFile.json="$out/pooler.json"
    ;;
  replica)
    source tests/scale/replica.sh
    trap replica_stop EXIT
    replica_start
    # Every commit waits until the replica has applied it: tests that write then read at once
    # without a Consistency-Token (most of the suite) see their writes, while every read runs there.
    replica_sync on
    echo "== tests with reads on a streaming replica ($REPLICA_URL, primary $PRIMARY_URL)"
    # tests/replicas.test.ts holds what a server without replicas does (its routing is tested below).
    DATABASE_URL="$PRIMARY_URL/postgres" TEST_READ_DATABASE_URL="$REPLICA_URL/postgres" \
      suite "$out/replica.json" replicas
    replica_sync off
    echo "== routing, fallback and read-your-writes on an asynchronous replica"
    npx vitest run --config tests/scale/vitest.config.ts tests/scale/replicas.test.ts --reporter=default \
      --reporter=json --outputFile.json="$out/replica-routing.json"
    ;;
  *)
    echo "usage: tests/scale/run.sh pgbouncer|replica RESULT_DIR" >&2
    exit 2
    ;;
esac
