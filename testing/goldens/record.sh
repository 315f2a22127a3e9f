#!/usr/bin/env bash
# Re-record the kube-scheduler v1.34 goldens from upstream itself (see README.md).
#
#   testing/goldens/record.sh            # rewrite testing/goldens/v1.34/ and DIFFERENCES.md
#   testing/goldens/record.sh OUT_DIR    # record into OUT_DIR only (what the test does)
#
# Scenarios: every folder of the conformance corpus (${KUBESCHED_CONFORMANCE_DIR:-../shared/conformance}
# beside the repository) and every folder under testing/goldens/scenarios/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
corpus="${KUBESCHED_CONFORMANCE_DIR:-$repo/../shared/conformance}"
committed="$here/v1.34"
out="${1:-$committed}"
[ -d "$corpus" ] || { echo "record.sh: no conformance corpus at $corpus" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$work/recorder" ./recorder)
"$work/recorder" -out "$work/out" "$corpus" "$here/scenarios"
mkdir -p "$out"
rm -f "$out"/*.json
cp "$work"/out/*.json "$out"/
if [ "$out" = "$committed" ]; then
    python3 "$here/compare.py" "$committed" "$corpus" > "$here/DIFFERENCES.md"
fi
