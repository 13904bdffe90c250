#!/usr/bin/env bash
# Builds a PostgreSQL 15 primary and a streaming replica of it in a temporary directory, each on a
# port of its own, and exports their URL bases (postgres://root@127.0.0.1:PORT). The replica starts
# from pg_basebackup and streams the primary's WAL. `replica_sync on` makes every commit wait until
# the replica has applied it (synchronous_commit = remote_apply); `off` streams asynchronously.
#   source tests/scale/replica.sh; replica_start; ...; replica_stop
set -euo pipefail

PRIMARY_PORT=${PRIMARY_PORT:-5441}
REPLICA_PORT=${REPLICA_PORT:-5442}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | tail -1)}

# PostgreSQL refuses to run as root: its commands run as the postgres user then.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

replica_start() {
  REPLICA_DIR=$(mktemp -d)
  chmod 755 "$REPLICA_DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$REPLICA_DIR"
  as_postgres "$PG_BIN/initdb" -D "$REPLICA_DIR/primary" -U root --auth=trust >/dev/null
  cat >>"$REPLICA_DIR/primary/postgresql.conf" <<CONF
port = $PRIMARY_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$REPLICA_DIR'
max_connections = 300
fsync = off
CONF
  as_postgres "$PG_BIN/pg_ctl" -D "$REPLICA_DIR/primary" -l "$REPLICA_DIR/primary.log" -w start >/dev/null
  as_postgres "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U root -D "$REPLICA_DIR/replica" -R -X stream
  cat >>"$REPLICA_DIR/replica/postgresql.conf" <<CONF
port = $REPLICA_PORT
hot_standby_feedback = on
CONF
  as_postgres "$PG_BIN/pg_ctl" -D "$REPLICA_DIR/replica" -l "$REPLICA_DIR/replica.log" -w start >/dev/null
  PRIMARY_URL="postgres://root@127.0.0.1:$PRIMARY_PORT"
  REPLICA_URL="postgres://root@127.0.0.1:$REPLICA_PORT"
  export REPLICA_DIR PRIMARY_URL REPLICA_URL
  for _ in $(seq 1 100); do
    [ "$(psql "$PRIMARY_URL/postgres" -Atc 'SELECT count(*) FROM pg_stat_replication')" = 1 ] && return 0
    sleep 0.1
  done
  echo "the replica did not start streaming" >&2
  return 1
}

replica_sync() {
  local names="''"
  [ "$1" = on ] && names="'*'"
  psql "$PRIMARY_URL/postgres" -qc "ALTER SYSTEM SET synchronous_standby_names = $names" \
    -c "ALTER SYSTEM SET synchronous_commit = 'remote_apply'" -c 'SELECT pg_reload_conf()' >/dev/null
}

replica_stop() {
  [ -n "${REPLICA_DIR:-}" ] || return 0
  for node in replica primary; do
    as_postgres "$PG_BIN/pg_ctl" -D "$REPLICA_DIR/$node" -m immediate stop >/dev/null 2>&1 || true
  done
  rm -rf "$REPLICA_DIR"
}
