#!/usr/bin/env bash
# The test suite on the real components of a scaled-out deployment (docs/scaling.md):
#
#   bash tests/scale/run.sh pgbouncer RESULT_DIR   # the HTTP tests of state through PgBouncer
#                                                  # (transaction pooling), DATABASE_PREPARE=0; then a
#                                                  # server and the CLI without it (tests/scale/pooler.test.ts)
#   bash tests/scale/run.sh replica RESULT_DIR     # the HTTP tests of reads, with them on a streaming
#                                                  # replica, then tests/scale/replicas.test.ts
#
# Starts what it needs on ports of its own (tests/scale/pgbouncer.sh, tests/scale/replica.sh), stops
# it on exit, and writes vitest's JSON reports into RESULT_DIR. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

mode=${1:?pgbouncer or replica}
out=${2:?a directory for the JSON reports}
mkdir -p "$out"

# Focused subsets, not the whole suite again (that runs on PostgreSQL directly): through the
# pooler, what holds state across statements (transactions, locks, idempotency, the outbox, the
# settings, several processes); on the replica, the reads (embeds, counts, caches, clients, tenancy)
# and what reads after writing. The rest does nothing a pooler or a replica changes.
POOLER=(read relations tenant token-tenant write-inserts write-nested write-upserts write-update-delete
  write-bulk-patch idempotency idempotency-processes v1 webhooks preconditions role-settings postgrest-js-write
  many-processes batch streams)
REPLICA=(read relations relations-aggregates relations-tenancy read-cache tenant preconditions postgrest-js
  postgrest-js-embed react-admin csv query-method write-prefer v1 streams)
# suite REPORT NAME...
suite() {
  local report=$1 files=()
  shift
  for name in "$@"; do files+=("tests/$name.test.ts"); done
  npx vitest run "${files[@]}" --reporter=dot --reporter=json --outputFile.json="$report"
}

case "$mode" in
  pgbouncer)
    source tests/scale/pgbouncer.sh
    trap pgbouncer_stop EXIT
    pgbouncer_start
    echo "== tests through PgBouncer ($PGBOUNCER_URL, pool_mode=transaction)"
    DATABASE_URL="$PGBOUNCER_URL/postgres" DATABASE_PREPARE=0 suite "$out/pgbouncer.json" "${POOLER[@]}"
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
    DATABASE_URL="$PRIMARY_URL/postgres" TEST_READ_DATABASE_URL="$REPLICA_URL/postgres" \
      suite "$out/replica.json" "${REPLICA[@]}"
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
