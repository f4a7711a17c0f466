#!/usr/bin/env bash
# scaling.sh: how the variants scale with cores, as two tables.
#
#   open1  will-it-scale open1_processes (seed 004): every fscrypt-file-open
#          variant at T workers, ops/s (median of the timed runs) and the
#          ratio to base; GOMAXPROCS is left at the machine's CPU count.
#   read   the encrypted-file read of seed 003: every crypto-bio variant
#          at GOMAXPROCS=P (the decrypt workqueue's max_active follows
#          it), MB/s (median) and the ratio to workqueue.
#
# Each cell comes from `go run ./cmd/vfslab ab ... --json`; the script
# needs jq. Run it from the repository root (or anywhere inside it):
#
#   scripts/scaling.sh                    # T and P = 1 2 4 8 16
#   THREADS="1 2" PROCS="1 2" scripts/scaling.sh
#   PROCS="$(seq 1 16)" COUNT=10 scripts/scaling.sh
#
# Environment: THREADS (worker counts for open1), PROCS (GOMAXPROCS values
# for read), COUNT (timed runs per variant, default 5), RUNTIME (target
# duration of one timed run, default 200ms), MIB (size of the file read,
# default 64), OPEN1_PARAMS and READ_PARAMS (extra "--param k=v" flags,
# e.g. OPEN1_PARAMS="--param parent=encrypted"), VFSLAB (the command,
# default "go run ./cmd/vfslab"). On a machine with fewer CPUs than a T
# or P the workers share them; the table says how many CPUs there were.
set -euo pipefail

usage() {
	sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
}
case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
"") ;;
*)
	echo "scaling.sh: no arguments expected (see --help)" >&2
	exit 2
	;;
esac

if ! command -v jq >/dev/null 2>&1; then
	echo "scaling.sh: jq is required" >&2
	exit 1
fi

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
cd "$root"

THREADS=${THREADS:-"1 2 4 8 16"}
PROCS=${PROCS:-"1 2 4 8 16"}
COUNT=${COUNT:-5}
RUNTIME=${RUNTIME:-200ms}
MIB=${MIB:-64}
OPEN1_PARAMS=${OPEN1_PARAMS:-}
READ_PARAMS=${READ_PARAMS:-}
VFSLAB=${VFSLAB:-"go run ./cmd/vfslab"}

for n in $THREADS $PROCS "$COUNT" "$MIB"; do
	case "$n" in
	'' | *[!0-9]* | 0)
		echo "scaling.sh: $n is not a positive integer" >&2
		exit 2
		;;
	esac
done

cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo "?")
echo "scaling.sh: $cpus CPUs, $COUNT timed runs per cell, runtime $RUNTIME"
echo

# open1: one ab run with every worker count.
tlist=$(echo "$THREADS" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')
# shellcheck disable=SC2086 # VFSLAB and the params are word lists
json=$($VFSLAB ab --workload open1 --threads "$tlist" --count "$COUNT" --runtime "$RUNTIME" \
	--quiet --json $OPEN1_PARAMS)
echo "open1 (fscrypt-file-open), ops/s, ratio to base (the first variant) in parentheses"
echo "$json" | jq -r '"params: " + (.params | to_entries | map("\(.key)=\(.value)") | join(" "))'
echo "$json" | jq -r '
	  (["T"] + (.groups[0].variants | map(.Variant)) | @tsv),
	  (.groups[] | .variants[0].stats.ops_per_sec.median as $b
		| [(.threads | tostring)] + (.variants | to_entries | map(
		(.value.stats.ops_per_sec.median | floor | tostring)
		+ (if .key > 0 and $b > 0 then " (\(.value.stats.ops_per_sec.median / $b * 100 | round / 100))" else "" end)
	  )) | @tsv)' | column -t -s $'\t'
echo

# read: one ab run per GOMAXPROCS value.
echo "read (crypto-bio, $MIB MiB), MB/s, ratio to the first variant in parentheses"
header=""
for p in $PROCS; do
	# shellcheck disable=SC2086
	json=$(GOMAXPROCS=$p $VFSLAB ab --workload read --param "mib=$MIB" --count "$COUNT" \
		--runtime "$RUNTIME" --quiet --json $READ_PARAMS)
	if [ -z "$header" ]; then
		header=$(echo "$json" | jq -r '["P"] + (.groups[0].variants | map(.Variant)) | @tsv')
		echo "$json" | jq -r '"params: " + (.params | to_entries | map("\(.key)=\(.value)") | join(" "))'
		rows="$header"
	fi
	row=$(echo "$json" | jq -r --arg p "$p" '.groups[0].variants[0].stats.mb_per_sec.median as $b
		| [$p] + (.groups[0].variants | to_entries | map(
		(.value.stats.mb_per_sec.median | floor | tostring)
		+ (if .key > 0 and $b > 0 then " (\(.value.stats.mb_per_sec.median / $b * 100 | round / 100))" else "" end)
	)) | @tsv')
	rows="$rows"$'\n'"$row"
done
echo "$rows" | column -t -s $'\t'
