# What `.ci/run` and `.ci/soak` share (sourced): the build settings, the build cache, the
# system packages, the database servers and their URLs.

export CARGO_TERM_COLOR=never
# A clean clone builds everything once: incremental state and full debug info only cost time
# here (panics still name their file and line).
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only
# Linked by mold (Debian's package, below) instead of GNU ld: CI links hundreds of binaries
# (tests, doc tests, trybuild's, examples), each with Diesel and three database clients.
export RUSTFLAGS="-C link-arg=-fuse-ld=mold" RUSTDOCFLAGS="-C link-arg=-fuse-ld=mold"

# The build directory lives outside the clone, so that a machine that ran CI before builds
# only what changed (cargo's fingerprints decide; a workspace moved to another path keeps its
# artifacts' names). A cold machine has none and builds everything: slower, the same checks.
# SEQGEN_CI_CACHE moves it; a cache grown past 40 GB starts over. Steps that build the
# `seqgen` binary with other features (the README's cargo test, the package) have build
# directories of their own beside it.
ci_cache="${SEQGEN_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/seqgen-ci}"
mkdir -p "$ci_cache"
if [ "$(du -s --block-size=1G "$ci_cache" | cut -f1)" -gt 40 ]; then
    echo "the build cache $ci_cache passed 40 GB: starting over"
    rm -rf "${ci_cache:?}"/*
fi
export CARGO_TARGET_DIR="$ci_cache/target"
export PG_DATABASE_URL="postgres://postgres@127.0.0.1:5432/test"
export MYSQL_DATABASE_URL="mysql://root@127.0.0.1:3306/test"
# Every backend and cluster test runs: a missing server or URL fails instead of skipping.
export CI=true

# The linker (mold); the libraries of the postgres and mysql features; Galera, pgbouncer,
# Prometheus, Patroni, etcd and HAProxy for their tests: galera-4 and rsync (suite/galera.rs and
# tools/tests/galera_faults.rs start three nodes of their own), pgbouncer (suite/pgbouncer.rs),
# prometheus with promtool (seqgen-cli/tests/monitoring.rs), patroni, etcd-server and haproxy
# (tools/tests/patroni.rs); cargo-hack and cargo-fuzz where this machine has none.
# The toolchain of the workspace's rust-version (`1.86` → `1.86.0`).
msrv_toolchain() {
    python3 .ci/msrv.py --toolchain
}

install_packages() {
    local missing=() pkg
    for pkg in mold libpq-dev libmariadb-dev libmariadb-dev-compat pkg-config galera-4 rsync \
        pgbouncer prometheus patroni etcd-server haproxy faketime nftables; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    fi
    rustup run "$(msrv_toolchain)" rustc --version >/dev/null 2>&1 \
        || rustup toolchain install "$(msrv_toolchain)" --profile minimal
    cargo nextest --version >/dev/null 2>&1 || cargo install --locked cargo-nextest
    cargo hack --version >/dev/null 2>&1 || cargo install --locked cargo-hack
    cargo +nightly fuzz --version >/dev/null 2>&1 || cargo install --locked cargo-fuzz
}

# The machine's PostgreSQL and MariaDB, started if they are down; waits until both answer.
start_servers() {
    if ! pg_isready -q -h 127.0.0.1 -p 5432; then
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
    fi
    if ! mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping >/dev/null 2>&1; then
        start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
    fi
    local waited
    for waited in $(seq 60); do
        pg_isready -q -h 127.0.0.1 -p 5432 \
            && mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping >/dev/null 2>&1 \
            && break
        sleep 1
    done
    echo "waited ${waited:-0} s for the servers"
    pg_isready -h 127.0.0.1 -p 5432
    mariadb-admin --protocol=tcp -h 127.0.0.1 -u root ping
}
