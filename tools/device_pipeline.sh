#!/usr/bin/env bash
# One device call of a namespace's run on the GPU machine: unlocks, runs Snakemake under a time limit that lets it
# stop cleanly, and copies under $OUT what must survive the machine: the archive if it was made, the tables, the
# job logs (tools/job_times.py reads their phases, and the GPU lock's trace) and the run's state in parts
# (tools/device_state.py). A machine is given back soon after a call returns and the next one starts bare, so the
# next call carries that state: copy the parts into .resume/ here and name it in `carry` beside .gpu; the run goes
# on where it stopped (sources edited in between run what they feed again).
#   source .gpu/enter.sh >/dev/null && export PYTHONPATH=$PWD/src:$PYTHONPATH && bash tools/device_pipeline.sh NS [SECONDS]
#   here, after it:  rm -rf .resume && mkdir .resume && cp /work/.device/N/state.tar.gz.part-* .resume/
set -u
ns=$1 limit=${2:-550}
[ -n "${OUT:-}" ] || { echo "device_pipeline: \$OUT is not set (run it through the device tool)" >&2; exit 2; }
[ -d work ] || python tools/device_state.py restore .resume  # a fresh machine: the state the last call left
snakemake --unlock "results/$ns.tar.gz" >/dev/null 2>&1
mkdir -p work/logs
export FIELDNOTE_GPU_TRACE=$PWD/work/logs/gpulock.jsonl  # every hold of the GPU lock (its table in job_times.py)
start=$SECONDS
# the host's CPU time every 5 s (/proc/stat's first line, after the time): how busy its cores were along the run
echo "cores $(nproc)" > "$OUT/cpu.txt"
(while :; do echo "$(date +%s) $(head -1 /proc/stat)"; sleep 5; done) >> "$OUT/cpu.txt" & sampler=$!
trap 'kill "$sampler" 2>/dev/null' EXIT  # stopped however the script ends
# the greedy scheduler: the ILP one needs pulp, 16 MB of the call's 64 MiB carry (envs/prepare-gpu.sh leaves it out).
# SECONDS bounds the whole script: Snakemake stops 50 s before it (its 10 s to die included), so that the state of a
# run cut short is saved before the call's own limit (a state of 23 MiB and the logs took about 30 s on an H100;
# without the margin a cut run lost its call, runbook 65)
timeout -k 10 -s INT "$((limit - 50))" snakemake --cores 14 --scheduler greedy --keep-going --rerun-incomplete "results/$ns.tar.gz" \
    > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? after $((SECONDS - start)) s"
kill "$sampler" && wait "$sampler" 2>/dev/null
if cp "results/$ns.tar.gz" "$OUT/" 2>/dev/null; then python -m fieldnote.publish.show "results/$ns" > "$OUT/tables.txt" 2>&1; fi
python tools/device_state.py save "$OUT"  # work/'s tables are in it too
tar czf "$OUT/logs.tar.gz" work/logs work/benchmarks 2>/dev/null
python tools/job_times.py work/logs --snakemake-log "$OUT/snakemake.log" --cpu "$OUT/cpu.txt" > "$OUT/job_times.md" 2>&1
grep -E "^Error in rule|check failed|FAILED" "$OUT/snakemake.log" | sort | uniq -c | head -20
grep "steps (" "$OUT/snakemake.log" | tail -1
