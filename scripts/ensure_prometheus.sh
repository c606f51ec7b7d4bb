#!/usr/bin/env bash
# The Prometheus tests run Debian's prometheus and promtool; install them when missing (we run as root).
set -euo pipefail
if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "prometheus is missing; install it with:" \
       "sudo apt-get install -y --no-install-recommends prometheus" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The package's own service would hold :9090; the tests start their own Prometheus on a free port.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$POLICY"
  chmod +x "$POLICY"
  trap 'rm -f "$POLICY"' EXIT
fi
apt-get update -qq
# No recommends: prometheus-node-exporter would start another service the tests do not use.
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus promtool
