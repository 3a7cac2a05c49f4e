#!/usr/bin/env bash
# One device call that measures a namespace: the GPU tests named in TESTS first (the run stops if one of the tunes'
# tests failed: every compiled job depends on them), then tools/device_pipeline.sh under what is left of LIMIT
# seconds. A namespace named for the H100 or the H200 is renamed for the GPU the call found, since the device tool
# lends either (not inside a file's name: its note and docs keep theirs): on an H200 the H100's roofline line is
# dropped (config.yaml's is the H200's); on an H100 the H100's is added, as h100-002r states it.
#   NS=h100-002r TESTS="tunes_in_fresh or queued_clock" LIMIT=585 bash tools/device_call.sh   (through the device tool)
set -u
source tools/device_env.sh  # the kit, the library peers carried in .peers/, PYTHONPATH
start=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
ns=${NS:?name the namespace in NS}
rename() {  # the namespace file of $ns written as that of $1, less its roofline line
  grep -v "^roofline:" "config/namespaces/$ns.yaml" | sed -e "s/$ns\([^-.]\|\$\)/$1\1/g; s/ on an H100,/,/" \
    > "config/namespaces/$1.yaml" && rm "config/namespaces/$ns.yaml" && ns=$1
}
case "$gpu" in
  *H200*) [ "${ns#h100-}" = "$ns" ] || rename "h200-${ns#h100-}";;
  *H100*) if [ "${ns#h200-}" != "$ns" ]; then
            rename "h100-${ns#h200-}" && grep "^roofline:" config/namespaces/h100-002r.yaml >> "config/namespaces/$ns.yaml"
          fi;;
esac
echo "gpu: $gpu, namespace $ns"
# every library peer the namespace measures is installed (.peers/ carried, or unpacked by a call just before on this
# machine): else the run would spend its time and fail at each library check
python3 - "$ns" <<'EOF' || exit 1
import sys, yaml
from fieldnote.measure.gpu import libraries
ns = yaml.safe_load(open(f"config/namespaces/{sys.argv[1]}.yaml"))
missing = [f"{lib['package']} ({op})" for op, lib in libraries().items()
           if op in ns["ops"] and "library" in ns["implementations"] and lib["version"] is None]
sys.exit(f"device_call: not installed here: {', '.join(missing)}" if missing else 0)
EOF
if [ -n "${TESTS:-}" ]; then
  timeout 200 python -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py -k "$TESTS" > "$OUT/gputests.txt" 2>&1
  echo "gpu tests rc=$? after $((SECONDS - start)) s"; tail -4 "$OUT/gputests.txt"
  grep -q "FAILED.*tunes" "$OUT/gputests.txt" && exit 1
fi
bash tools/device_pipeline.sh "$ns" $((${LIMIT:-560} - SECONDS + start))
echo "$ns: $((SECONDS - start)) s in all"
