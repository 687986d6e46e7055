#!/usr/bin/env bash
# Attack your own TorchScript model on your own images (README, "Examples").
#
#   bash docs/examples/attack_own_model.sh [OUT]
#
# Stand-ins for your files, so that the example runs as it is: my_net.pt is a copy of the
# shipped CIFAR-10 model (any TorchScript module taking float32 [N, 3, H, W] in [0, 1] works)
# and my_images/ holds 4 CIFAR-10 test images as PNGs in one folder per class index
# (my_images/3/img_0.png, ...; class-name folders work too, sorted as torchvision's
# ImageFolder sorts them). Writes OUT/r.jsonl (one record per image) and OUT/png/ (the
# adversarial PNGs, each re-classified as adversarial after saving). OUT defaults to a new
# temporary folder. ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
advbo="${ADVBO:-build/advbo}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
cp models/cifar10_cw.pt "$out/my_net.pt"
# my_images/: the clean PNGs advbo saves for 4 shipped test images, sorted by their class.
"$advbo" attack --dataset cifar10 --attack random --untargeted -n 4 --budget 1 -q \
  --save-images "$out/clean" -o "$out/clean.jsonl" > /dev/null
/usr/bin/python3 - "$out" <<'PY'
import json, os, shutil, sys
out = sys.argv[1]
for line in open(os.path.join(out, "clean.jsonl")):
    r = json.loads(line)
    folder = os.path.join(out, "my_images", str(r["true_class"]))
    os.makedirs(folder, exist_ok=True)
    shutil.copy(os.path.join(out, "clean", f"clean_{r['image_index']}_tu.png"),
                os.path.join(folder, f"img_{r['image_index']}.png"))
PY
# The example itself: Square, untargeted, 8/255, 500 queries per image.
"$advbo" attack --model "$out/my_net.pt" --data "$out/my_images" --attack square --eps 8/255 \
  --untargeted --budget 500 --seed 0 -q -o "$out/r.jsonl" --save-images "$out/png"
echo "records: $out/r.jsonl; adversarial PNGs: $out/png/"
