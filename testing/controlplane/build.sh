#!/usr/bin/env bash
# Build the reference components once, into a cache outside the repository keyed by the pinned versions:
#   ${KUBESCHED_CONTROLPLANE_CACHE:-$HOME/.cache/kubesched/controlplane}/<kubernetes>-etcd-<etcd>-stamped/bin/
# A warm run finds every binary there, runs no Go at all and builds nothing. Prints the bin folder on stdout;
# progress goes to stderr as lines starting with "controlplane:".
#
# The Kubernetes binaries are stamped with the release they are built from, as the upstream release build
# does (-ldflags -X of the version packages); without it they report v0.0.0-master and `kubectl version`
# refuses the mismatch. The "-stamped" suffix of the cache folder keeps binaries built before the stamp
# from being reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$here/go.mod")"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$here/go.mod")"
cache="${KUBESCHED_CONTROLPLANE_CACHE:-$HOME/.cache/kubesched/controlplane}"
bin="$cache/${version}-etcd-${etcd_version}-stamped/bin"
names=(etcd kube-apiserver kubectl kube-scheduler kube-controller-manager)
declare -A pkgs=(
    [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
    [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
    [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
    [kubectl]=k8s.io/kubernetes/cmd/kubectl
    [etcd]=go.etcd.io/etcd/server/v3
)

missing=()
for name in "${names[@]}"; do
    [ -x "$bin/$name" ] || missing+=("$name")
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "$bin"
    exit 0
fi

if ! [[ "$version" =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
    echo "controlplane: $here/go.mod pins k8s.io/kubernetes '$version', not a release vMAJOR.MINOR.PATCH" >&2
    exit 1
fi
major="${BASH_REMATCH[1]}"
minor="${BASH_REMATCH[2]}"
cd "$here"
# The release's own date (from the module proxy's record), so the same pin always gives the same binaries.
build_date="$(go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' \
    k8s.io/kubernetes 2>/dev/null || true)"
build_date="${build_date:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}"
stamp=()
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=("-X '$pkg.gitVersion=$version'" "-X '$pkg.gitMajor=$major'" "-X '$pkg.gitMinor=$minor'"
            "-X '$pkg.gitCommit='" "-X '$pkg.gitTreeState=clean'" "-X '$pkg.buildDate=$build_date'")
done

shown_bin="${bin/#$HOME/\~}"
echo "controlplane: building ${missing[*]} ($version, etcd $etcd_version) from source with Go:" \
     "first run only, 10-15 minutes on two cores; cached in $shown_bin" >&2
mkdir -p "$bin"
count=0
for name in "${missing[@]}"; do
    count=$((count + 1))
    ldflags="-s -w"
    [ "$name" = etcd ] || ldflags="$ldflags ${stamp[*]}"
    echo "controlplane: building $name ($count/${#missing[@]}) from ${pkgs[$name]} ..." >&2
    started=$SECONDS
    tmp="$bin/$name.tmp.$$"
    CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$tmp" "${pkgs[$name]}"
    mv "$tmp" "$bin/$name"
    took=$((SECONDS - started))
    echo "controlplane: built $name in $((took / 60))m$(printf '%02d' $((took % 60)))s" >&2
done
echo "controlplane: all built in $shown_bin; later runs reuse them" >&2
echo "$bin"
