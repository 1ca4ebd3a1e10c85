#!/bin/sh
# Runs COMMAND as N ranks with torchrun-style variables (the TCP backend) on
# this machine and fails when any rank fails. Usage: run-tcp-ranks.sh N COMMAND...
set -u
n=$1; shift
# A port from the process id: parallel test runs do not collide.
port=$((20000 + $$ % 20000))
pids=""
r=0
while [ $r -lt "$n" ]; do
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@" &
  pids="$pids $!"
  r=$((r + 1))
done
status=0
for p in $pids; do
  wait "$p" || status=1
done
exit $status
