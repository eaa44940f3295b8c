#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying the scripts here and for
# `make test-slurm`: Debian's munged, slurmctld and slurmd, every file of theirs (config,
# key, sockets, state, logs) under one directory, nothing in /etc touched.
#
#   cluster.sh up   [DIR]   install what is missing (Debian packages; root), start the daemons,
#                           wait until the node takes jobs; reuses a cluster already up in DIR
#   cluster.sh env  [DIR]   print the SLURM_CONF export that points sbatch, squeue, scancel here
#   cluster.sh down [DIR]   cancel every job, stop the daemons, wait until they are gone
#
# DIR defaults to /tmp/duplexmpe-slurm. The ports (DMPE_SLURM_PORT, default 16817 for
# slurmctld and the next one for slurmd) keep clear of a system Slurm on the usual 6817.
# Running `up` twice, or `down` with nothing up, is safe.
set -euo pipefail

cmd=${1:-}
dir=${2:-/tmp/duplexmpe-slurm}
port=${DMPE_SLURM_PORT:-16817}
conf="$dir/etc/slurm.conf"
sock="$dir/munge/munge.socket"
export SLURM_CONF="$conf"

die() { echo "cluster.sh: $*" >&2; exit 1; }

alive() { # alive PIDFILE: the daemon it names is running
	[ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

install() {
	local pkgs=(munge slurmctld slurmd slurm-client) missing=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	[ "$(id -u)" -eq 0 ] || die "Debian packages ${missing[*]} are missing; install them as root (apt-get install ${missing[*]})"
	echo "cluster.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# The packages would start system daemons under systemd; there is none here, and
	# this cluster runs its own, so nothing starts at install time.
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

write_config() {
	local host cpus mem
	host=$(hostname -s)
	cpus=$(nproc)
	# slurmd refuses a node that claims more memory than it has; claim most of it.
	mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
	mkdir -p "$dir/etc" "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
	chmod 700 "$dir/munge"
	cat >"$conf.tmp" <<EOF
# Written by examples/deploy/slurm/cluster.sh: a one-node cluster for tests.
ClusterName=duplexmpe-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# Finished jobs stay visible to scontrol for an hour, and every one is written to the
# job completion log (there is no accounting database here).
MinJobAge=3600
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
KillWait=10
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
	mv "$conf.tmp" "$conf"
}

start_munge() {
	alive "$dir/munge/munged.pid" && return
	if [ ! -s "$dir/munge/munge.key" ]; then
		mungekey --create --keyfile="$dir/munge/munge.key" --force
	fi
	chmod 400 "$dir/munge/munge.key"
	rm -f "$sock" "$sock.lock"
	# --force: munged runs as root here, which it warns about.
	munged --force --socket="$sock" --key-file="$dir/munge/munge.key" \
		--pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
		--seed-file="$dir/munge/munged.seed"
	munge --socket="$sock" -n </dev/null | unmunge --socket="$sock" >/dev/null ||
		die "munged does not answer on $sock; see $dir/log/munged.log"
}

wait_for() { # wait_for SECONDS WHAT COMMAND...: retry COMMAND until it succeeds
	local limit=$1 what=$2 i
	shift 2
	for ((i = 0; i < limit * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "$what did not come up within $limit s; see the logs in $dir/log"
}

node_idle() {
	sinfo --noheader --nodes="$(hostname -s)" --format=%T | grep -Eq '^(idle|mixed|allocated)'
}

up() {
	install
	if alive "$dir/slurmctld.pid" && alive "$dir/slurmd.pid" && alive "$dir/munge/munged.pid" && scontrol ping >/dev/null 2>&1; then
		echo "cluster.sh: already up in $dir"
		return
	fi
	down_daemons # whatever half is left of an earlier cluster
	local p
	for p in "$port" $((port + 1)); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			die "port $p is taken (another cluster? \`cluster.sh down\` it, or set DMPE_SLURM_PORT)"
		fi
	done
	write_config
	start_munge
	# -c: start with an empty job queue, whatever an earlier cluster left in state/.
	slurmctld -c -f "$conf"
	wait_for 60 slurmctld scontrol ping
	slurmd -f "$conf"
	wait_for 60 "the node" node_idle
	echo "cluster.sh: up in $dir (SLURM_CONF=$conf)"
}

stop() { # stop PIDFILE NAME: TERM the daemon, wait, KILL it if it lingers
	local pidfile=$1 name=$2 pid i
	[ -s "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "cluster.sh: $name ($pid) did not stop; killing it" >&2
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidfile"
}

down_daemons() {
	stop "$dir/slurmd.pid" slurmd
	stop "$dir/slurmctld.pid" slurmctld
	stop "$dir/munge/munged.pid" munged
}

down() {
	if alive "$dir/slurmctld.pid" && scontrol ping >/dev/null 2>&1; then
		# Jobs first, while slurmd is there to end them and their processes.
		scancel --full --partition=test >/dev/null 2>&1 || true
		local i
		for ((i = 0; i < 150; i++)); do
			[ -z "$(squeue --noheader --states=RUNNING,COMPLETING,PENDING --format=%i 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	down_daemons
	echo "cluster.sh: down ($dir kept for its logs)"
}

case "$cmd" in
up) up ;;
down) down ;;
env) echo "export SLURM_CONF=$conf" ;;
*) die "usage: cluster.sh up|env|down [DIR]" ;;
esac
