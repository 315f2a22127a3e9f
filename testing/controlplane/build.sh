#!/usr/bin/env bash
# Build the reference components once, into a cache outside the repository keyed by the pinned version:
#   ${KUBESCHED_CONTROLPLANE_CACHE:-$HOME/.cache/kubesched/controlplane}/<version>/bin/
# A warm run finds every binary there and builds nothing. Prints the bin folder on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$here/go.mod")"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$here/go.mod")"
bin="${KUBESCHED_CONTROLPLANE_CACHE:-$HOME/.cache/kubesched/controlplane}/${version}-etcd-${etcd_version}/bin"
mkdir -p "$bin"
declare -A pkgs=(
    [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
    [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
    [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
    [kubectl]=k8s.io/kubernetes/cmd/kubectl
    [etcd]=go.etcd.io/etcd/server/v3
)
cd "$here"
for name in etcd kube-apiserver kubectl kube-scheduler kube-controller-manager; do
    if [ -x "$bin/$name" ]; then
        continue
    fi
    echo "controlplane: building $name ${pkgs[$name]} ($version)" >&2
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$bin/$name.tmp" "${pkgs[$name]}"
    mv "$bin/$name.tmp" "$bin/$name"
done
echo "$bin"
