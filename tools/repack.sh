#!/usr/bin/env bash
# Repack shipped archives after a change of what a bundle holds or how its note renders, and re-pin each in its
# namespace file. An H200 namespace is replayed from its archive (its measurement and sources kept); an original
# one is imported again from ../shared/seed-evidence (its `archived:` key dropped for the run, then re-pinned).
# Usage: tools/repack.sh NS...   (from the checkout's root; needs .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
for ns in "$@"; do
  file="config/namespaces/$ns.yaml"
  if [[ $ns == original-* ]]; then
    sed -i '/^archived:/,$d' "$file"  # the pin is the file's last key
    rm -rf "results/$ns" "results/$ns.tar.gz"
  fi
  .venv/bin/snakemake --cores 2 "results/$ns.tar.gz" > "work/repack-$ns.log" 2>&1 || { tail -5 "work/repack-$ns.log"; exit 1; }
  sha=$(sha256sum "results/$ns.tar.gz" | cut -d' ' -f1)
  mv "results/$ns.tar.gz" "archives/$ns.tar.gz"
  if [[ $ns == original-* ]]; then
    printf 'archived:   # the published JSON as tables; to rebuild it from ../shared/seed-evidence: tools/repack.sh\n  archive: archives/%s.tar.gz\n  sha256: %s\n' "$ns" "$sha" >> "$file"
  else
    sed -i -E "s/^  sha256: [0-9a-f]{64}/  sha256: $sha/" "$file"
  fi
  echo "$ns: archives/$ns.tar.gz $sha"
done
