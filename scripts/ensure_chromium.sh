#!/usr/bin/env bash
# Browser tests drive Debian's Chromium; install it when missing (we run as root).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "chromium is missing; install it with: sudo apt-get install -y chromium" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
command -v chromium
