#!/usr/bin/env bash
# The browser tests drive a real chromium: install Debian's package when it is missing
# (never `playwright install`; Playwright uses this one).
set -euo pipefail
if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
$sudo apt-get update -q
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium  # env: sudo drops it
