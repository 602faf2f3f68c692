#!/usr/bin/env bash
# Instructions per call of every case of the `per_id` bench (and of uuid without `fast-rng`),
# counted by valgrind's callgrind: unlike wall-clock time, these repeat under any machine load.
# Each case runs twice, with N1 and N2 iterations; (Ir(N2) - Ir(N1)) / (N2 - N1) is the cost
# of one call, with start-up (runtime, first seeding) cancelled out. User-space instructions
# only: a system call (e.g. getrandom) counts its few user-side instructions, not the kernel's.
#   idgen-core/benches/instructions.sh              # every case
#   idgen-core/benches/instructions.sh 'PublicId'   # cases whose name contains this
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${CARGO_TARGET_DIR:=target}"
export CARGO_TARGET_DIR
N1=${N1:-20000}
N2=${N2:-120000}
filter=${1:-}

ours=$(cargo bench -p idgen-engine --features hilo --bench per_id --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*per_id[^"]*\)".*/\1/p' | tail -1)
cargo build --release --offline --quiet \
    --manifest-path idgen-core/benches/uuid-without-fast-rng/Cargo.toml
plain="$CARGO_TARGET_DIR/release/uuid-without-fast-rng"

ir() { # binary case iterations -> total instructions
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$1" --run "$2" "$3" >/dev/null 2>&1
    sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out"
    rm -f "$out"
}

echo "| case | instructions per call |"
echo "|---|---:|"
for bin in "$ours" "$plain"; do
    while IFS= read -r case; do
        [[ -n "$filter" && "$case" != *"$filter"* ]] && continue
        a=$(ir "$bin" "$case" "$N1")
        b=$(ir "$bin" "$case" "$N2")
        echo "| $case | $(awk -v a="$a" -v b="$b" -v n="$((N2 - N1))" 'BEGIN { printf "%.1f", (b - a) / n }') |"
    done < <("$bin" --list)
done
