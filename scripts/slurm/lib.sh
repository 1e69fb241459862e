# Functions shared by sweep.sh and resubmit.sh (sourced, not run): the jobs
# of one device kind's sweep, whose settings are in STATE/sweep.conf.
#
#   submit_array STATE INDICES   the shard tasks INDICES ("0-2", "1,3") -> job id
#   submit_merge STATE DEPENDENCY   the merge job (sbatch --dependency) -> job id
#   submit_watch STATE ARRAY RETRIES   the job that resubmits ARRAY's failed
#                                      tasks once it ended (afterany)
#   job_ids STATE FILE   the job ids recorded in STATE/FILE, comma-separated

# sbatch --parsable prints "ID" or "ID;CLUSTER".
sbatch_id() {
  local out
  out=$(sbatch --parsable "$@") || return 1
  echo "${out%%;*}"
}

submit_array() (
  source "$1/sweep.conf" || exit 1
  id=$(sbatch_id --job-name="lowbit-tune-$name" --array="$2" \
    "${place[@]}" "${pin[@]}" "${extra[@]}" \
    --output="$1/logs/task-%a-%A.out" "$here/task.sh" "$1") || exit 1
  echo "$id" >>"$1/array.jobids"
  echo "$id"
)

submit_merge() (
  source "$1/sweep.conf" || exit 1
  id=$(sbatch_id --job-name="lowbit-merge-$name" --dependency="$2" \
    --ntasks=1 "${place[@]}" "${extra[@]}" \
    --output="$1/logs/merge-%j.out" "$here/merge.sh" "$1") || exit 1
  echo "$id" >"$1/merge.jobid"
  echo "$id"
)

submit_watch() (
  source "$1/sweep.conf" || exit 1
  sbatch_id --job-name="lowbit-watch-$name" --dependency="afterany:$2" \
    --ntasks=1 "${place[@]}" "${extra[@]}" \
    --output="$1/logs/watch-%j.out" \
    --wrap="bash '$here/resubmit.sh' --retries $3 '$1'"
)

job_ids() {
  [ -s "$1/$2" ] && paste -sd, "$1/$2"
}
