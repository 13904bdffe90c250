#!/usr/bin/env bash
# Starts a PgBouncer 1.18 in transaction pooling in front of the local PostgreSQL, on a port of its
# own with its configuration in a temporary directory, and prints its URL base
# (postgres://root@127.0.0.1:PORT). Installs Debian's pgbouncer when it is missing.
#   source tests/scale/pgbouncer.sh; pgbouncer_start; ...; pgbouncer_stop
set -euo pipefail

PGBOUNCER_PORT=${PGBOUNCER_PORT:-6439}
UPSTREAM_PORT=${UPSTREAM_PORT:-5432}

pgbouncer_start() {
  if ! command -v pgbouncer >/dev/null; then
    # Waits for another apt (CI's Chromium install, say) rather than failing on its lock.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq pgbouncer >/dev/null
  fi
  PGBOUNCER_DIR=$(mktemp -d)
  cat >"$PGBOUNCER_DIR/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$UPSTREAM_PORT

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $PGBOUNCER_DIR/users.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 20
max_db_connections = 40
server_reset_query =
logfile = $PGBOUNCER_DIR/pgbouncer.log
pidfile = $PGBOUNCER_DIR/pgbouncer.pid
INI
  printf '"root" ""\n"postgres" ""\n' >"$PGBOUNCER_DIR/users.txt"
  chown -R postgres "$PGBOUNCER_DIR" 2>/dev/null || true
  # PgBouncer refuses to run as root: -u drops to postgres.
  local as_user=()
  [ "$(id -u)" = 0 ] && as_user=(-u postgres)
  pgbouncer -d "${as_user[@]}" "$PGBOUNCER_DIR/pgbouncer.ini"
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p "$PGBOUNCER_PORT" && break; sleep 0.1; done
  PGBOUNCER_URL="postgres://root@127.0.0.1:$PGBOUNCER_PORT"
  export PGBOUNCER_DIR PGBOUNCER_URL
}

pgbouncer_stop() {
  [ -n "${PGBOUNCER_DIR:-}" ] || return 0
  [ -f "$PGBOUNCER_DIR/pgbouncer.pid" ] && kill "$(cat "$PGBOUNCER_DIR/pgbouncer.pid")" 2>/dev/null || true
  rm -rf "$PGBOUNCER_DIR"
}
