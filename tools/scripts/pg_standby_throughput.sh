#!/usr/bin/env bash
# IDs per second on a PostgreSQL primary alone, with a synchronous standby and with an
# asynchronous one (BENCHMARKS.md, "PostgreSQL with a standby"). Starts its own primary and
# standby on ports 55432/55433 in /tmp/pg_standby_throughput (never the shared server), runs
# four release-built loadgen processes x 2 threads for 5 s per load, three rounds interleaved,
# and stops both servers. Run as root (the servers run as `postgres`) after
#   cargo build --release -p seqgen-tools --bin loadgen --all-features
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
dir=/tmp/pg_standby_throughput
primary=55432 standby=55433
loadgen="$(cd "$(dirname "$0")/../.." && pwd)/target/release/loadgen"
url="postgres://postgres@127.0.0.1:$primary/postgres"
as_pg() { su postgres -c "$*"; }
stop() {
    as_pg "$bin/pg_ctl -D $dir/standby -m immediate -w stop" >/dev/null 2>&1 || true
    as_pg "$bin/pg_ctl -D $dir/primary -m immediate -w stop" >/dev/null 2>&1 || true
}
trap stop EXIT

rm -rf "$dir" && mkdir -p "$dir" && chown postgres "$dir"
as_pg "$bin/initdb -D $dir/primary -U postgres -A trust -N" >/dev/null
cat >>"$dir/primary/postgresql.conf" <<CONF
port = $primary
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 40
CONF
as_pg "$bin/pg_ctl -D $dir/primary -l $dir/primary.log -w start" >/dev/null
as_pg "$bin/pg_basebackup -h 127.0.0.1 -p $primary -U postgres -D $dir/standby -R -X stream -c fast"
sed -i "s/^port = $primary/port = $standby/" "$dir/standby/postgresql.conf"

# alone: no standby; sync: every commit waits for the standby; async: it does not.
setup() {
    local names=""
    if [ "$1" = alone ]; then
        as_pg "$bin/pg_ctl -D $dir/standby -m fast -w stop" >/dev/null 2>&1 || true
    else
        as_pg "$bin/pg_ctl -D $dir/standby -l $dir/standby.log -w start" >/dev/null 2>&1 || true
    fi
    [ "$1" = sync ] && names="*"
    psql -q -h 127.0.0.1 -p "$primary" -U postgres \
        -c "ALTER SYSTEM SET synchronous_standby_names = '$names'" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 1
}

# IDs per second of four processes together.
load() {
    local key=$1 total=0 n
    shift
    for i in 1 2 3 4; do
        "$loadgen" --url "$url" --key "$key" --threads 2 --seconds 5 "$@" >"$dir/out$i" 2>"$dir/err$i" &
    done
    wait
    for i in 1 2 3 4; do
        n=$(grep -o '"ids_per_sec":[0-9]*' "$dir/out$i" | cut -d: -f2) || n=0
        total=$((total + ${n:-0}))
    done
    echo "$total"
}

for round in 1 2 3; do
    for setup in alone sync async; do
        setup "$setup"
        batched=$(load batched)
        fixed=$(load fixed10 --fixed-batch --batch 10)
        # Refused on an asynchronous primary (Error::AsyncReplication).
        gapless=refused
        [ "$setup" != async ] && gapless=$(load gapless --mode gapless --insert)
        echo "round $round, $setup: batched $batched, fixed blocks of 10 $fixed, gapless $gapless"
    done
done
