#!/usr/bin/env bash
# Drives Engage with the real Python PostgREST client (postgrest-py, tests/clients/postgrest_py/).
#
#   bash tests/clients/postgrest-py.sh [RESULT.json]
#
# Creates a venv in a temporary directory with the pinned packages of
# tests/clients/postgrest_py/requirements.txt, a fresh PostgreSQL database (admin connection
# PG_ADMIN_URL, default postgres://root@127.0.0.1:5432/postgres), builds Engage and starts it on a
# free port, creates an organisation token, and runs pytest. The server is stopped and the database
# dropped on exit. Prints `postgrest-py: N passed, N failed` last, writes {"passed": N, "failed": N}
# to RESULT.json when given, and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:-}
PG_ADMIN_URL=${PG_ADMIN_URL:-postgres://root@127.0.0.1:5432/postgres}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
here=tests/clients/postgrest_py

work=$(mktemp -d)
db="engage_postgrest_py_$(date +%s)_$$_$RANDOM"
server_pid=""
passed=0
failed=0
counted=""

report() {
  # Without a junit file (a failure before pytest ran, or pytest died), count one failure.
  if [ -z "$counted" ]; then failed=$((failed > 0 ? failed : 1)); fi
  echo "postgrest-py: $passed passed, $failed failed"
  if [ -n "$out" ]; then printf '{"passed": %d, "failed": %d}\n' "$passed" "$failed" >"$out"; fi
}

cleanup() {
  local status=$?
  trap - EXIT
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -s "$work/server.log" ]; then
    echo "-- server log (last 40 lines)" >&2
    tail -n 40 "$work/server.log" >&2
  fi
  psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
  report
  if [ "$status" -eq 0 ] && { [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; }; then status=1; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! psql "$PG_ADMIN_URL" -qAtc 'SELECT 1' >/dev/null; then
  echo "postgrest-py: PostgreSQL is not reachable at $PG_ADMIN_URL" >&2
  exit 1
fi

echo "== postgrest-py: venv with the pinned packages"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_RETRIES=1 PIP_DEFAULT_TIMEOUT=20 PIP_NO_INPUT=1
"$PYTHON" -m venv "$work/venv"
# pip's output (warnings about unreachable indexes included) is shown only if the install fails.
if ! "$work/venv/bin/python" -m pip install --disable-pip-version-check --quiet --no-input \
  -r "$here/requirements.txt" >"$work/pip.log" 2>&1; then
  cat "$work/pip.log" >&2
  echo "postgrest-py: pip install failed" >&2
  exit 1
fi

echo "== postgrest-py: database $db"
psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
# The admin URL with its database replaced: scheme://user@host:port/<db>[?query].
case "$PG_ADMIN_URL" in *\?*) query="?${PG_ADMIN_URL#*\?}" ;; *) query="" ;; esac
base=${PG_ADMIN_URL%%\?*}
database_url="${base%/*}/$db$query"

[ -d node_modules ] || npm ci --no-audit --no-fund
npm run --silent build

# A free port: bind to port 0 and take what the system gave.
port=$("$work/venv/bin/python" -c \
  'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "== postgrest-py: Engage on 127.0.0.1:$port"
DATABASE_URL="$database_url" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn \
  node dist/server/main.js >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "postgrest-py: the server exited before answering /health" >&2
    exit 1
  fi
  sleep 0.1
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/health"

organisation=$("$work/venv/bin/python" -c 'import uuid; print(uuid.uuid4())')
token=$(DATABASE_URL="$database_url" npm run --silent token -- create --organisation "$organisation" | tail -n 1)
case "$token" in
  "" | *" "*) echo "postgrest-py: token create printed no token (last line: '$token')" >&2; exit 1 ;;
esac

echo "== postgrest-py: pytest"
pytest_status=0
ENGAGE_URL="http://127.0.0.1:$port/api/v1" \
  ENGAGE_TOKEN="$token" \
  ENGAGE_ORGANISATION_ID="$organisation" \
  ENGAGE_DATABASE_URL="$database_url" \
  PYTHONDONTWRITEBYTECODE=1 \
  "$work/venv/bin/python" -m pytest "$here" -p no:cacheprovider -rfE --junitxml="$work/junit.xml" \
  || pytest_status=$?

if [ -s "$work/junit.xml" ]; then
  read -r passed failed < <("$work/venv/bin/python" - "$work/junit.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
total = sum(int(s.get("tests", 0)) for s in suites)
failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(total - failed - skipped, failed)
PY
  )
  counted=1
fi
exit "$pytest_status"
