#!/usr/bin/env bash
# Prepare .gpu/ for the H200 machine with the shared kit, then make its two library links real files:
# the kit ships libdw.so.1 and libelf.so.1 as 14-byte text stand-ins for symlinks, and Nsight Systems'
# importer (QdstrmImporter) then fails with "file too short", leaving only a .qdstrm and no report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ../shared/gpu/prepare.sh "$@"
for lib in libdw libelf; do
  chmod u+w .gpu/nsys-lib
  rm -f ".gpu/nsys-lib/$lib.so.1"
  cp ".gpu/nsys-lib/$lib-0.188.so" ".gpu/nsys-lib/$lib.so.1"
done
# Liger (the layer norm's library peer, pyproject's `peers` extra): its wheel alone, the machine has what it needs
# (torch, triton). CUTLASS's and cuEquivariance's are packed smaller in .peers/ (envs/prepare-peers.sh).
python3 -m pip download -q --no-deps -d .gpu/wheels "liger-kernel==0.8.5" 2>&1 | grep -v '^WARNING: Location' || true
rm -f .gpu/wheels/nvidia_cutlass-*.whl
# Snakemake's ILP scheduler's solver (pulp, 16 MB with its CBC binaries for three systems): the device calls use
# --scheduler greedy, and the room goes to cuEquivariance's packed files (envs/prepare-peers.sh) in the same call
rm -f .gpu/wheels/pulp-*.whl
ls -la .gpu/nsys-lib .gpu/wheels/liger_kernel-*
