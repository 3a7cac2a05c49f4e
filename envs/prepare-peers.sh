#!/usr/bin/env bash
# Pack the library peers too large for .gpu/wheels as xz tars in .peers/: cuEquivariance (trimul's; about 28 MB, its
# wheels 73 MB) and CUTLASS's Python interface (the matmul's; 1.9 MB, its wheel 6.4 MB of zip: the tree and every
# archive must fit one device call's 64 MiB). tools/device_env.sh unpacks them into /root/peers, on PYTHONPATH:
#   carry [".gpu", ".peers"]:  source tools/device_env.sh && ...
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pack NAME WHEEL...: the wheels (the machine's Python is 3.12; its torch, triton and scipy are there, so only these
# and what they import) installed into a tree of their own, as .peers/NAME.tar.xz
pack() {
  local name=$1; shift
  python3 -m pip download -q --no-deps --python-version 3.12 --platform manylinux_2_28_x86_64 --only-binary=:all: \
      -d "$work/$name/wheels" "$@"
  python3 -m pip install -q --no-deps --target "$work/$name/site" --python-version 3.12 \
      --platform manylinux_2_28_x86_64 --only-binary=:all: "$work/$name"/wheels/*.whl
  mkdir -p .peers
  tar cf - -C "$work/$name/site" . | xz -9 -T2 > ".peers/$name.tar.xz.part"
  mv ".peers/$name.tar.xz.part" ".peers/$name.tar.xz"
}
pack cueq cuequivariance-ops-torch-cu13==0.13.0 cuequivariance-ops-cu13==0.13.0 cuequivariance-torch==0.13.0 \
    cuequivariance==0.13.0 platformdirs==4.14.9 tqdm==4.70.1 nvidia-ml-py==13.615.71
pack cutlass nvidia-cutlass==4.2.0.0
ls -la .peers
