# Source at the start of a device call, from the project root: the GPU kit (.gpu/enter.sh), the library peers
# carried packed in .peers/ (envs/prepare-peers.sh) unpacked once a machine outside the project, and PYTHONPATH with
# the project's src/ and the peers ahead of what enter.sh put there (drop that and jsonschema is gone).
#   source tools/device_env.sh && python3 -m fieldnote.measure.bench trimul library trimul_3xtf32_wgmma
source .gpu/enter.sh >/dev/null || return 1
_peers=/root/peers
for _packed in .peers/*.tar.xz; do
  [ -e "$_packed" ] || continue
  _mark="$_peers/.unpacked-$(basename "$_packed")"  # a warm machine keeps them: unpacked once
  [ -e "$_mark" ] || { mkdir -p "$_peers" && tar xJf "$_packed" -C "$_peers" && touch "$_mark"; } || return 1
done
[ -d "$_peers" ] && export PYTHONPATH="$_peers:$PYTHONPATH"
export PYTHONPATH="$PWD/src:$PYTHONPATH" PYTHONUNBUFFERED=1
