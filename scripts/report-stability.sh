#!/bin/sh
# report-stability.sh: the stability table of `vfslab report`: three
# consecutive default runs, each saved as JSON, then compared row by row
# (vfslab report stability): every seed headline row must keep its
# significance and, when significant, stay within ±10% of its median,
# judged only when every run's noise probe found the machine quiet.
#
# Usage: scripts/report-stability.sh [RUNS [DIR]]   (default 3 runs, a
# temporary directory; extra flags for vfslab report in $REPORT_FLAGS)
set -eu
runs=${1:-3}
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/vfslab-stability.XXXXXX")}
mkdir -p "$dir"
bin="$dir/vfslab"
go build -o "$bin" ./cmd/vfslab
# The review verdicts are cached per build: the first run fills the
# cache, so that the timed runs are alike.
i=1
while [ "$i" -le "$runs" ]; do
	echo "run $i of $runs -> $dir/run$i.json" >&2
	# shellcheck disable=SC2086
	"$bin" report --format json --quiet ${REPORT_FLAGS:-} > "$dir/run$i.json"
	i=$((i + 1))
done
files=""
i=1
while [ "$i" -le "$runs" ]; do
	files="$files $dir/run$i.json"
	i=$((i + 1))
done
# shellcheck disable=SC2086
"$bin" report stability $files | tee "$dir/stability.txt"
