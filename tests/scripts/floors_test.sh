#!/usr/bin/env bash
# The library's floors (docs/architecture.md): a folder of framework/include/torchfit and framework/src
# includes torchfit headers only from its own floor and the floors below it, lowest first:
#   runtime < io < layers < model < keras < saving < data < distributed < training < testing
# (src/compat, LibTorch version differences, is open to every floor). Every Keras piece is in keras/.
set -uo pipefail
TEST_NAME=floors source "$(dirname "$0")/common.sh"
cd "$SRC/framework"
FLOORS=(runtime io layers model keras saving data distributed training testing)
rank() { local i; for i in "${!FLOORS[@]}"; do [ "${FLOORS[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }
bad=0
for f in "${FLOORS[@]}"; do
  me=$(rank "$f")
  for dir in include/torchfit/$f src/$f; do
    [ -d "$dir" ] || continue
    while IFS= read -r hit; do
      file=${hit%%:*}
      dep=$(echo "$hit" | sed -E 's/.*#include [<"](torchfit\/|\.\.\/)?([a-z_]+)\/.*/\2/')
      [ "$dep" = compat ] && continue
      r=$(rank "$dep")
      [ "$r" -lt 0 ] && continue  # not a floor (a system header in a sub-folder)
      if [ "$r" -gt "$me" ]; then echo "$file ($f) includes $dep, a floor above it"; bad=1; fi
    done < <(grep -rnE '#include [<"](torchfit/|\.\./)?[a-z_]+/' "$dir" | grep -vE '#include <(torch|ATen|c10|nlohmann|spdlog|fmt|sys|arpa|gtest|opencv2|netinet)/')
  done
done
[ $bad -eq 0 ] || fail "includes against the floors above"
# Keras compatibility lives in keras/: no other floor reads Keras files or translates Keras configs.
# (io/npy.cpp opens NumPy's .npz files, which are zip archives too, not Keras files.)
outside=$(grep -rlE 'hdf5_file\.h|keras_layer_config\.h|H5Fopen|zip_open' include src | grep -v '/keras/' |
  grep -vx 'src/io/npy.cpp' || true)
[ -z "$outside" ] || fail "Keras file or config code outside keras/: $outside"
echo "PASS"
