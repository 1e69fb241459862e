#!/usr/bin/env bash
# The merge job of a sweep (sweep.sh submits it with --dependency=afterok
# on the shard tasks): `lowbit schedule merge` of every STATE/shard-*.json,
# and of SCHEDULES/<kind>.json when it exists (unless the sweep was
# submitted with --replace), into SCHEDULES/<kind>.json. lowbit names a
# shard that is missing or did not finish, and fails.
#
#   sbatch --dependency=afterok:ARRAY ... merge.sh STATE     (sweep.sh does this)
set -uo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi
[ $# -eq 1 ] || { echo "merge.sh: usage: merge.sh STATE" >&2; exit 2; }
state=$1
source "$state/sweep.conf" || exit 1
inputs=("$state"/shard-*.json)
out=$schedules/$name.json
[ -f "$out" ] && [ "$replace" != 1 ] && inputs+=("$out")
mkdir -p "$schedules" || exit 1
echo "merge of $name: ${inputs[*]} -> $out, start $(date -u +%FT%TZ)"
"$lowbit" schedule merge "${inputs[@]}" --out "$out" || exit 1
touch "$state/merged"
echo "merge of $name: end $(date -u +%FT%TZ)"
