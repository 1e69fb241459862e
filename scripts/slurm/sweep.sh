#!/usr/bin/env bash
# Submits a lowbit tuning sweep to Slurm, from a login node. Per device
# kind: a job array of N shard tasks (task.sh: `lowbit tune --shard I/N
# TUNE-OPTIONS` on a whole node of the kind), a merge job
# (--dependency=afterok on the array; merge.sh) that writes
# SCHEDULES/<kind>.json, and a watcher job (afterany; resubmit.sh) that
# resubmits failed tasks alone, --retries times.
#
#   sweep.sh --kind NAME:partition=P --shards N [options] -- TUNE-OPTIONS...
#
#   --kind NAME:partition=P[,lowbit=PATH]    a device kind: its nodes are a
#   --kind NAME:constraint=F[,lowbit=PATH]   partition or carry node feature F;
#                       lowbit=PATH: its native lowbit build (default --lowbit).
#                       Repeat for each kind; NAME names schedules/NAME.json.
#   --shards N          shards per kind (--array=0-(N-1))
#   --lowbit PATH       lowbit binary (default: lowbit on PATH)
#   --dir DIR           state: per kind shard files, logs, job ids (default ./sweeps)
#   --schedules DIR     where NAME.json is merged (default ./schedules)
#   --cpus-per-task C   pin by CPUs (C = all of a node's cores) instead of --exclusive
#   --time T            time limit of each job (sbatch --time)
#   --retries R         resubmit failed tasks up to R times (default 1; 0: never)
#   --replace           write NAME.json from this sweep alone (default: merge
#                       into the existing file, keeping the faster of each key)
#   --sbatch ARG        one more sbatch argument for every job (repeatable:
#                       --account=A, --qos=Q)
#
# Paths must be visible from the nodes (a shared file system). TUNE-OPTIONS
# are `lowbit tune`'s (--model/--shapes, --format, --budget, ...) without
# --shard and --out; give every shard the same ones. docs/tuning-sweeps.md
# has the sizing and a whole example.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "sweep.sh: $*" >&2; exit 1; }

kinds=() shards= lowbit= dir=sweeps schedules=schedules pin=(--exclusive)
limit= retries=1 replace=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help) usage; exit 0 ;;
  --kind) kinds+=("${2:?--kind needs NAME:partition=P or NAME:constraint=F}"); shift 2 ;;
  --shards) shards=${2:?--shards needs a count}; shift 2 ;;
  --lowbit) lowbit=${2:?--lowbit needs a path}; shift 2 ;;
  --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
  --schedules) schedules=${2:?--schedules needs a directory}; shift 2 ;;
  --cpus-per-task) pin=(--cpus-per-task="${2:?--cpus-per-task needs a count}"); shift 2 ;;
  --time) limit=${2:?--time needs a limit}; shift 2 ;;
  --retries) retries=${2:?--retries needs a count}; shift 2 ;;
  --replace) replace=1; shift ;;
  --sbatch) extra+=("${2:?--sbatch needs an argument}"); shift 2 ;;
  --) shift; break ;;
  *) die "unknown option '$1' (see --help; lowbit tune's options come after --)" ;;
  esac
done
tune=("$@")
[ ${#kinds[@]} -gt 0 ] || die "name at least one --kind"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards: expected a positive count, got '$shards'"
[[ "$retries" =~ ^[0-9]+$ ]] || die "--retries: expected a count, got '$retries'"
[ ${#tune[@]} -gt 0 ] || die "no lowbit tune options after -- (at least --model or --shapes, and --format)"
for word in "${tune[@]}"; do
  case "$word" in
  --shard | --shard=* | --out | --out=* | --list) die "'$word' is set per task by sweep.sh; leave it out" ;;
  esac
done
command -v sbatch >/dev/null || die "sbatch not found: run this on a Slurm login node"
[ -n "$limit" ] && extra+=(--time="$limit")
if [ -z "$lowbit" ]; then
  lowbit=$(command -v lowbit) || die "no lowbit on PATH: name it with --lowbit"
fi
mkdir -p "$dir" "$schedules" || die "cannot create $dir or $schedules"
dir=$(realpath "$dir")
schedules=$(realpath "$schedules")
source "$here/lib.sh"

for spec in "${kinds[@]}"; do
  name=${spec%%:*}
  [[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] && [ "$name" != "$spec" ] ||
    die "--kind '$spec': expected NAME:partition=P or NAME:constraint=F"
  place=() kind_lowbit=$lowbit
  IFS=, read -ra fields <<<"${spec#*:}"
  for field in "${fields[@]}"; do
    case "$field" in
    partition=?*) place+=(--partition="${field#partition=}") ;;
    constraint=?*) place+=(--constraint="${field#constraint=}") ;;
    lowbit=?*) kind_lowbit=${field#lowbit=} ;;
    *) die "--kind '$spec': unknown field '$field' (partition=, constraint=, lowbit=)" ;;
    esac
  done
  [ ${#place[@]} -gt 0 ] || die "--kind '$spec': name its partition= or constraint="
  [ -x "$kind_lowbit" ] || die "--kind $name: $kind_lowbit is not an executable"
  state=$dir/$name
  [ ! -e "$state" ] || die "$state exists (a sweep of $name is there: resubmit.sh resumes it; or name another --dir)"
  mkdir -p "$state/logs" || die "cannot create $state"
  {
    echo "name=$name"
    echo "shards=$shards"
    echo "replace=$replace"
    declare -p here schedules place pin extra tune
    echo "lowbit=$(printf %q "$(realpath "$kind_lowbit")")"
  } >"$state/sweep.conf"
  array=$(submit_array "$state" "0-$((shards - 1))") || die "sbatch of the $name tasks failed"
  merge=$(submit_merge "$state" "afterok:$array") || die "sbatch of the $name merge failed"
  echo "sweep $name: tasks 0-$((shards - 1)) as job $array, merge job $merge -> $schedules/$name.json"
  if [ "$retries" -gt 0 ]; then
    watch=$(submit_watch "$state" "$array" "$retries") || die "sbatch of the $name watcher failed"
    echo "sweep $name: watcher job $watch (resubmits failed tasks, $retries retries)"
  fi
  echo "sweep $name: state and logs in $state"
done
