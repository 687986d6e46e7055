#!/usr/bin/env bash
# Sets up a single-node Slurm cluster on this Debian 12 machine (as root) so that
# tools/slurm/bench_array.sbatch can be checked for real: installs slurm-wlm and munge from
# Debian, writes /etc/slurm/slurm.conf for this host (all CPUs, one partition "advbo"), starts
# munged, slurmctld and slurmd (no systemd needed), and waits until the node is idle.
# Idempotent: rerunning restarts the daemons with the same configuration.
#
#   bash tools/slurm/local_cluster.sh          # then: sinfo, squeue, sbatch ...
#   bash tools/slurm/local_cluster.sh stop     # stop the daemons
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then echo "local_cluster.sh: run as root" >&2; exit 1; fi
if [ "${1:-}" = stop ]; then
  pkill -x slurmd || true; pkill -x slurmctld || true; pkill -x munged || true
  exit 0
fi
command -v slurmctld > /dev/null && command -v munged > /dev/null || {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge > /dev/null
}
host="$(hostname -s)"
cpus="$(nproc)"
mem_mb="$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)"
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile /etc/munge/munge.key
chown munge:munge /etc/munge/munge.key /run/munge 2> /dev/null || true
chmod 400 /etc/munge/munge.key
cat > /etc/slurm/slurm.conf <<CONF
# Written by advbo's tools/slurm/local_cluster.sh: one node, one partition, no accounting.
ClusterName=advbo-local
SlurmctldHost=${host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=${host} CPUs=${cpus} RealMemory=${mem_mb} State=UNKNOWN
PartitionName=advbo Nodes=${host} Default=YES MaxTime=INFINITE State=UP
CONF
pkill -x slurmd || true; pkill -x slurmctld || true; pkill -x munged || true
sleep 1
munged --force
slurmctld -i
slurmd
for _ in $(seq 1 30); do
  if sinfo -h -o %t 2> /dev/null | grep -qE '^(idle|mix|alloc)'; then
    sinfo
    exit 0
  fi
  sleep 1
done
echo "local_cluster.sh: the node did not come up; see /var/log/slurm/" >&2
sinfo >&2 || true
exit 1
