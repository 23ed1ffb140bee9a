#!/usr/bin/env bash
# A stand-in for bin/ferry that TestDemo runs demo.sh against: every
# command answers at once from files in $FAKE_DIR, so the test checks what
# demo.sh makes of each answer without a region. $FAKE_DIR/<command> (or
# <command>-<file base name> for deploy) holds "EXIT CODE" on its first
# line and the output after it; ids are numbered per deploy.
set -euo pipefail
dir=${FAKE_DIR:?}
answer() {
	local f=$1
	[[ -f $f ]] || { echo "fake ferry: no answer $f" >&2; exit 99; }
	tail -n +2 "$f" | sed "s/ID/$(cat "$dir/id" 2>/dev/null || echo none)/g"
	exit "$(head -n 1 "$f")"
}
case $1 in
local)
	if [[ ${2:-} == world ]]; then
		cat "$dir/world" 2>/dev/null || true
		exit 0
	fi
	exec tail -f /dev/null # the region: runs until the demo stops it
	;;
deploy)
	file=${!#}
	base=$(basename "$file" .json)
	n=$(($(cat "$dir/n" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$dir/n"
	printf '20250101T00000%dZ-abcdef\n' "$n" >"$dir/id"
	if [[ -f $dir/world-$base ]]; then sed "s/ID/$(cat "$dir/id")/g" "$dir/world-$base" >"$dir/world"; fi
	answer "$dir/deploy-$base"
	;;
*)
	answer "$dir/$1"
	;;
esac
