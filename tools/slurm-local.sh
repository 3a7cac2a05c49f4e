#!/usr/bin/env bash
# A single-node Slurm on this machine, from Debian's packages (slurm-wlm, slurmdbd, munge, mariadb-server), for
# the cluster profile's test: `tools/slurm-local.sh start` brings up munge, MariaDB, slurmdbd, slurmctld and
# slurmd on localhost, with accounting (sacct) and one fake GPU (gres, no device file: a job that asks for the
# GPU is placed, and finds no GPU); `tools/slurm-local.sh stop` takes them down. State lives in /tmp/fieldnote-slurm.
set -euo pipefail
STATE=/tmp/fieldnote-slurm
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))

configure() {
  rm -rf "$STATE/state" "$STATE/spool"  # a fresh controller each start (the accounting database is kept)
  mkdir -p "$STATE"/{spool,state,log} /etc/slurm /run/munge /run/mysqld
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=fieldnote
SlurmctldHost=$HOST
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStoreFlags=job_comment
MinJobAge=300
SchedulerType=sched/backfill
SlurmdSpoolDir=$STATE/spool
StateSaveLocation=$STATE/state
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  echo "NodeName=$HOST Name=gpu File=/dev/null" > /etc/slurm/gres.conf  # a GPU slot, no GPU behind it
  cat > /etc/slurm/slurmdbd.conf <<CONF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
PidFile=$STATE/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
CONF
  chmod 600 /etc/slurm/slurmdbd.conf
}

wait_for() {  # command, what: up to 60 s
  for _ in $(seq 60); do
    if eval "$1" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "slurm-local: $2 did not come up (logs: $STATE/log)" >&2
  return 1
}

start() {
  configure
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  chown munge:munge /etc/munge/munge.key /run/munge && chmod 400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
  wait_for "munge -n | unmunge" munge
  chown mysql:mysql /run/mysqld
  pgrep -x mariadbd >/dev/null || pgrep -x mysqld >/dev/null || \
    (runuser -u mysql -- /usr/sbin/mariadbd --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock \
       > "$STATE/log/mariadb.log" 2>&1 &)
  wait_for "mysql -e 'select 1'" MariaDB
  mysql -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  pgrep -x slurmdbd >/dev/null || /usr/sbin/slurmdbd
  wait_for "sacctmgr -n list cluster" slurmdbd
  sacctmgr -i -Q add cluster fieldnote >/dev/null 2>&1 || true
  sacctmgr -i -Q add account fieldnote cluster=fieldnote >/dev/null 2>&1 || true
  sacctmgr -i -Q add user "$(id -un)" account=fieldnote cluster=fieldnote >/dev/null 2>&1 || true
  pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
  pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
  wait_for "sinfo -h -o %T | grep -qE 'idle|mixed'" "the node"
  sinfo
}

stop() {
  for d in slurmd slurmctld slurmdbd; do pkill -x "$d" 2>/dev/null || true; done
  pkill -x mariadbd 2>/dev/null || true
  pkill -x munged 2>/dev/null || true
}

"${1:?start or stop}"
