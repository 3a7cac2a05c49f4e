#!/usr/bin/env bash
# One device call of a namespace's run on the GPU machine, made to be issued again at once while the machine is
# warm (it keeps work/ about 30 s after a call returns): unlocks, runs Snakemake under a time limit that lets it
# stop cleanly, and copies under $OUT what must survive the machine: the archive if it was made, the tables, the
# job logs (tools/job_times.py reads their phases, and the GPU lock's trace) and the benchmark records.
#   source .gpu/enter.sh >/dev/null && export PYTHONPATH=$PWD/src:$PYTHONPATH && bash tools/device_pipeline.sh NS [SECONDS]
set -u
ns=$1 limit=${2:-550}
[ -n "${OUT:-}" ] || { echo "device_pipeline: \$OUT is not set (run it through the device tool)" >&2; exit 2; }
snakemake --unlock "results/$ns.tar.gz" >/dev/null 2>&1
mkdir -p work/logs
export FIELDNOTE_GPU_TRACE=$PWD/work/logs/gpulock.jsonl  # every hold of the GPU lock (its table in job_times.py)
start=$SECONDS
timeout -k 10 -s INT "$limit" snakemake --cores 14 --keep-going --rerun-incomplete "results/$ns.tar.gz" \
    > "$OUT/snakemake.log" 2>&1
echo "snakemake rc=$? after $((SECONDS - start)) s"
if cp "results/$ns.tar.gz" "$OUT/" 2>/dev/null; then python -m fieldnote.show "results/$ns" > "$OUT/tables.txt" 2>&1; fi
find "work/$ns" -name "*.parquet" -o -name "*.json" | tar czf "$OUT/work-tables.tar.gz" -T - 2>/dev/null
tar czf "$OUT/logs.tar.gz" work/logs work/benchmarks 2>/dev/null
python tools/job_times.py work/logs > "$OUT/job_times.md" 2>&1
grep -E "^Error in rule|check failed|FAILED" "$OUT/snakemake.log" | sort | uniq -c | head -20
grep "steps (" "$OUT/snakemake.log" | tail -1
