#!/usr/bin/env bash
# Stops the processes that test/e2e/cluster-up.sh started, and only those: each pid file holds the pid and the
# process's start time, so a pid that was reused by an unrelated process is never signalled.
# Then removes the cluster state (etcd data, certificates, kubeconfig); logs/ is kept unless --purge.
#
#   test/e2e/cluster-down.sh [--keep-logs | --purge]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PURGE=0
case "${1:-}" in
  --purge) PURGE=1;;
  --keep-logs|"") ;;
  *) e2e_die "usage: cluster-down.sh [--keep-logs | --purge]";;
esac

PIDS=$E2E_PIDS
if [ ! -d "$PIDS" ]; then
  e2e_log "no cluster state in $E2E_STATE: nothing to stop"
  exit 0
fi

# Reverse start order: clients first, etcd last. Unknown pid files (none today) are stopped after these.
order=(agent-sandbox-controller kube-scheduler-sandbox kube-scheduler-sandbox-standby kube-scheduler-default sandbox-extender
       sandbox-extender-standby snapshot-feeder kwok kube-controller-manager kube-apiserver etcd)
for f in "$PIDS"/*; do
  [ -e "$f" ] || continue
  n=$(basename "$f")
  case " ${order[*]} " in *" $n "*) ;; *) order+=("$n");; esac
done

failed=0
# Real nodes first (kubelet.sh): their kubelets, the pods' containers and their containerds, mounts and cgroups.
if [ -d "$E2E_STATE/nodes" ]; then "$E2E_DIR/kubelet.sh" down || failed=1; fi
for n in "${order[@]}"; do
  e2e_stop "$n" || failed=1
done
[ "$failed" = 0 ] || e2e_die "some processes could not be stopped; pid files left in $PIDS"

rmdir "$PIDS"
rm -rf "${E2E_STATE:?}"/{etcd,pki,kubeconfig,bin,cluster.env,cmd} "$E2E_STATE"/snapshot.json*
if [ "$PURGE" = 1 ]; then rm -rf "$E2E_STATE"; e2e_log "removed $E2E_STATE"
else e2e_log "cluster stopped; logs kept in $E2E_STATE/logs"; fi
