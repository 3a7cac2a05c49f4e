#!/usr/bin/env bash
# One device call that measures a namespace: the GPU tests named in TESTS first (the run stops if one of the tunes'
# tests failed: every compiled job depends on them), then tools/device_pipeline.sh under what is left of LIMIT
# seconds. A namespace named for the H100 or the H200 is renamed for the GPU the call found, since the device tool
# lends either: on an H200 the H100's roofline line is dropped (config.yaml's is the H200's).
#   NS=h100-002r TESTS="tunes_in_fresh or queued_clock" LIMIT=585 bash tools/device_call.sh   (through the device tool)
set -u
source tools/device_env.sh  # the kit, the library peers carried in .peers/, PYTHONPATH
start=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
ns=${NS:?name the namespace in NS}
case "$gpu" in
  *H200*) if [ "${ns#h100-}" != "$ns" ]; then
            other="h200-${ns#h100-}"
            grep -v "^roofline:" "config/namespaces/$ns.yaml" | sed -e "s/$ns/$other/g; s/ on an H100,/,/" \
              > "config/namespaces/$other.yaml" && rm "config/namespaces/$ns.yaml" && ns=$other
          fi;;
esac
echo "gpu: $gpu, namespace $ns"
if [ -n "${TESTS:-}" ]; then
  timeout 200 python -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -k "$TESTS" > "$OUT/gputests.txt" 2>&1
  echo "gpu tests rc=$? after $((SECONDS - start)) s"; tail -4 "$OUT/gputests.txt"
  grep -q "FAILED.*tunes" "$OUT/gputests.txt" && exit 1
fi
bash tools/device_pipeline.sh "$ns" $((${LIMIT:-560} - SECONDS + start))
echo "$ns: $((SECONDS - start)) s in all"
