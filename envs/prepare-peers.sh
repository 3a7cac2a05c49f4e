#!/usr/bin/env bash
# Pack cuEquivariance (trimul's library peer) for the GPU machine as .peers/cueq.tar.xz (about 28 MB; its wheels are
# 73 MB). With .gpu/ (22 MB once prepare-gpu.sh leaves pulp out) and the tree it fits one device call's 64 MiB:
#   carry [".gpu", ".peers"]:  mkdir -p /root/peers && tar xJf .peers/cueq.tar.xz -C /root/peers &&
#                              source .gpu/enter.sh && export PYTHONPATH=/root/peers:$PYTHONPATH && ...
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the machine's Python is 3.12; its torch, triton and scipy are there, so only these and what they import
python3 -m pip download -q --no-deps --python-version 3.12 --platform manylinux_2_28_x86_64 --only-binary=:all: \
    -d "$work/wheels" cuequivariance-ops-torch-cu13==0.13.0 cuequivariance-ops-cu13==0.13.0 \
    cuequivariance-torch==0.13.0 cuequivariance==0.13.0 platformdirs==4.14.9 tqdm==4.70.1 nvidia-ml-py==13.615.71
python3 -m pip install -q --no-deps --target "$work/site" --python-version 3.12 --platform manylinux_2_28_x86_64 \
    --only-binary=:all: "$work"/wheels/*.whl
mkdir -p .peers
tar cf - -C "$work/site" . | xz -9 -T2 > .peers/cueq.tar.xz.part
mv .peers/cueq.tar.xz.part .peers/cueq.tar.xz
ls -la .peers/cueq.tar.xz
