#!/usr/bin/env bash
# The Prometheus tests run Debian's prometheus, promtool and prometheus-alertmanager; install
# them when missing (we run as root).
set -euo pipefail
NEEDED="prometheus promtool prometheus-alertmanager"
missing() { for c in $NEEDED; do command -v "$c" >/dev/null 2>&1 || return 0; done; return 1; }
if ! missing; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "prometheus is missing; install it with:" \
       "sudo apt-get install -y --no-install-recommends prometheus prometheus-alertmanager" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The packages' own services would hold :9090 and :9093; the tests start their own on free ports.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$POLICY"
  chmod +x "$POLICY"
  trap 'rm -f "$POLICY"' EXIT
fi
apt-get update -qq
# No recommends: prometheus-node-exporter would start another service the tests do not use.
apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager >/dev/null
command -v $NEEDED
