#!/usr/bin/env bash
# A stand-in for bin/ferry that TestDemo runs demo.sh against: every
# command answers at once from files in $FAKE_DIR, so the test checks what
# demo.sh makes of each answer without a region. $FAKE_DIR/<command> (or
# <command>-<file base name> for deploy) holds "EXIT CODE" on its first
# line and the output after it; ids are numbered per deploy. The world is
# $FAKE_DIR/world-<base> and, as JSON, json-<base> (none: nothing cut),
# from the deploy, rollback or destroy of that name on.
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
	if [[ ${2:-} == world && ${3:-} == --json ]]; then
		cat "$dir/world.json" 2>/dev/null || echo '{"accounts": []}'
		exit 0
	fi
	if [[ ${2:-} == world ]]; then
		cat "$dir/world" 2>/dev/null || true
		exit 0
	fi
	if [[ ${2:-} == events ]]; then answer "$dir/local-events"; fi
	exec tail -f /dev/null # the region: runs until the demo stops it
	;;
deploy | rollback | destroy)
	# A new release: deploy's answer is named after its file, rollback's
	# and destroy's after the command.
	base=$1
	if [[ $1 == deploy ]]; then base=$(basename "${!#}" .json); fi
	n=$(($(cat "$dir/n" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$dir/n"
	printf '20250101T00000%dZ-abcdef\n' "$n" >"$dir/id"
	if [[ -f $dir/world-$base ]]; then sed "s/ID/$(cat "$dir/id")/g" "$dir/world-$base" >"$dir/world"; fi
	if [[ -f $dir/json-$base ]]; then cp "$dir/json-$base" "$dir/world.json"; fi
	if [[ $1 == deploy ]]; then answer "$dir/deploy-$base"; fi
	answer "$dir/$base"
	;;
plan)
	answer "$dir/plan-$(basename "${!#}" .json)"
	;;
pipeline)
	answer "$dir/pipeline-$2"
	;;
status)
	# status PROJECT, status PROJECT CONFIG and status --drift answer apart.
	case " $* " in
	*" --drift "*) answer "$dir/status-drift" ;;
	*" development "*) answer "$dir/status-development" ;;
	esac
	answer "$dir/status"
	;;
*)
	answer "$dir/$1"
	;;
esac
