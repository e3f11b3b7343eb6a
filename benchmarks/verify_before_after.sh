#!/usr/bin/env bash
# CPU seconds (user+sys, workers included) and peak memory of `privtool verify`
# with two installs of privtool: BEFORE (e.g. main's venv) and AFTER (this one).
#
#   bash benchmarks/verify_before_after.sh BEFORE_VENV/bin/privtool .venv/bin/privtool \
#        benchmarks/out/wv2/safe.json benchmarks/out/wv2/safe-trail.json ../shared/data/bms-webview-2.dat.gz
#
# Runs, for each install, every certificate without the original and then
# faithfulness alone with it, serially in one process (--executor serial), so
# CPU time measures the work itself and not the pool; the machine is shared,
# and CPU time is much steadier than wall time under load. Prints one line per
# run: install, what, CPU s, wall s, peak MiB, exit code (124: stopped by
# TIMEOUT=SECONDS, a limit per run; 0, the default, for none).
set -u
before=$1 after=$2 release=$3 trail=$4 data=$5
for label in before after; do
  exe=$before; [ "$label" = after ] && exe=$after
  for what in certificates faithfulness; do
    args=(verify "$release" --trail "$trail" --executor serial -q --json)
    [ "$what" = faithfulness ] && args+=(--original "$data" --only faithfulness)
    out=$(mktemp)
    /usr/bin/time -f "%U %S %e %M" -o "$out.time" timeout "${TIMEOUT:-0}" "$exe" "${args[@]}" > "$out"
    code=$?
    read -r user sys wall kb < "$out.time"
    python3 -c "import sys; print(sys.argv[1], sys.argv[2], 'cpu_s=%.1f' % (float(sys.argv[3]) + float(sys.argv[4])), 'wall_s=' + sys.argv[5], 'peak_mib=%d' % (int(sys.argv[6]) // 1024), 'exit=' + sys.argv[7])" \
      "$label" "$what" "$user" "$sys" "$wall" "$kb" "$code"
    [ -s "$out" ] && python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['certificates']:
    print('   ', c['guarantee'], c['holds'], c['units'], c['seconds'])" "$out"
    rm -f "$out" "$out.time"
  done
done
