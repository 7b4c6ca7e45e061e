#!/usr/bin/env bash
# Render a pypto_pro timeline HTML in headless Chromium and save a screenshot, to look at it.
#   scripts/screenshot_timeline.sh traces/add/add_kernel.timeline.html out.png
# Needs Debian's chromium (apt-get install chromium). The page needs no server and no network.
set -euo pipefail
html="$(realpath "$1")"; png="${2:-timeline.png}"
profile="$(mktemp -d)"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1400,900 \
  --screenshot="$png" "file://$html" 2>/dev/null
rm -rf "$profile"
echo "wrote $png"
