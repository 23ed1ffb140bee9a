#!/usr/bin/env bash
# The ferry demo (make demo): start a local region in the background, then
# deploy, swap, fail, halt, roll back and inspect coinbase/deploy-test. Each step
# checks its outcome; the demo exits non-zero at the first surprise and
# always stops the region.
set -euo pipefail

cd "$(dirname "$0")/.."
FERRY=${FERRY:-bin/ferry}
SPEED=${FERRY_DEMO_SPEED:-120}
POLL=${FERRY_DEMO_POLL:-200ms}
PROJECT=coinbase/deploy-test

[[ -x $FERRY ]] || { echo "demo: $FERRY is missing; run make build" >&2; exit 1; }

# A free-ish port: a random one nothing listens on.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	candidate=$((20000 + RANDOM % 20000))
	if port_free "$candidate"; then PORT=$candidate; break; fi
done
[[ -n $PORT ]] || { echo "demo: no free port found" >&2; exit 1; }
export FERRY_LOCAL_ENDPOINT="http://127.0.0.1:$PORT"
export USER=${USER:-demo}

LOG=$(mktemp -t ferry-local.XXXXXX)
OUT=$(mktemp -t ferry-demo.XXXXXX)
STAGES=$(mktemp -d -t ferry-stages.XXXXXX)
REGION_PID=
stop_region() {
	if [[ -n $REGION_PID ]] && kill -0 "$REGION_PID" 2>/dev/null; then
		kill "$REGION_PID" 2>/dev/null || true
		wait "$REGION_PID" 2>/dev/null || true
	fi
	rm -rf "$LOG" "$OUT" "$STAGES"
}
trap stop_region EXIT

bold=$'\e[1m' dim=$'\e[2m' reset=$'\e[0m'
if [[ ! -t 1 || -n ${NO_COLOR:-} ]]; then bold='' dim='' reset=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$reset"; }
note() { printf '%s%s%s\n' "$dim" "$*" "$reset"; }
die() {
	printf '\ndemo: FAILED: %s\n' "$*" >&2
	if [[ -s $LOG ]]; then printf '\nlast lines of the region log:\n' >&2; tail -n 20 "$LOG" >&2; fi
	exit 1
}

# shown ARGS...: the arguments as a shell would read them back (quoted
# where needed), so a command the demo shows can be pasted.
shown() {
	local a out=
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:=@%+-]+$ ]]; then
			out+=" $a"
		else
			out+=" '${a//\'/\'\\\'\'}'"
		fi
	done
	printf '%s' "${out# }"
}

# expect CODE CMD...: run a ferry command, showing its output (kept in
# $OUT), and check its exit code.
expect() {
	local want=$1 got
	shift
	printf '%s$ ferry %s%s\n' "$dim" "$(shown "$@")" "$reset"
	set +e
	"$FERRY" "$@" | tee "$OUT"
	got=${PIPESTATUS[0]}
	set -e
	[[ $got == "$want" ]] || die "ferry $(shown "$@") exited $got, expected $want"
}

# save FILE ARGS...: ferry ARGS, its output saved in FILE rather than
# shown; a non-zero exit ends the demo.
save() {
	local file=$1
	shift
	printf '%s$ ferry %s > %s%s\n' "$dim" "$(shown "$@")" "$file" "$reset"
	"$FERRY" "$@" >"$file" || die "ferry $(shown "$@") failed"
}

# ended WHAT: the last command's output says it ended in WHAT (an exit
# code alone does not say why: halt exits 0 when nothing was running).
ended() {
	grep -qF -- "$1" "$OUT" || die "the last command did not end in $1"
}

# await_promotion PATTERN WHAT: poll ferry pipeline status until a line
# matches PATTERN (an extended regular expression; the promotion runs in
# the deployer, not here), or fail naming WHAT; the last status stays in
# $OUT.
await_promotion() {
	local i
	printf '%s$ ferry pipeline status --local %s   (until it shows %s)%s\n' "$dim" "$PIPELINE" "$2" "$reset"
	for ((i = 0; i < ${FERRY_DEMO_PROMOTION_TRIES:-240}; i++)); do
		"$FERRY" pipeline status --local "$PIPELINE" >"$OUT" 2>&1 || true
		if grep -qE -- "$1" "$OUT"; then
			cat "$OUT"
			return 0
		fi
		sleep 0.5
	done
	cat "$OUT"
	die "no sign of $2 in pipeline status"
}

# released: the release id the last deploy started.
released() { sed -n 's/^ferry deploy: .* release \([^ ]*\)$/\1/p' "$OUT" | head -n 1; }

# world: the simulated world as ferry local world prints it.
world() { "$FERRY" local world --endpoint "$FERRY_LOCAL_ENDPOINT"; }

# show_world: the world's groups and instances, without tags and other
# projects' load balancers.
show_world() {
	local w
	w=$(world) || die "ferry local world failed"
	printf '%s\n' "$w" | grep -v -e '^ *tags ' -e 'other-project' -e '^world at' -e '^$' || true
}

# in_world ID: whether a group of release ID is in the world.
in_world() {
	local w
	w=$(world) || die "ferry local world failed"
	[[ $w == *"$1"* ]]
}

# no_cuts: no load balancer or target group of the world counted a cut
# connection (an instance stopped while it served, or a load balancer left
# with nothing healthy while a group was attached; one every group was
# drained out of, as a destroy leaves it, is withdrawn, not cut).
no_cuts() {
	local w
	w=$("$FERRY" local world --json --endpoint "$FERRY_LOCAL_ENDPOINT") || die "ferry local world --json failed"
	if grep -qE '"cut_connections": *[1-9]' <<<"$w"; then
		die "a connection was cut: $(grep -B12 -E '"cut_connections": *[1-9]' <<<"$w" | sed -n 's/.*"name": *"\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')"
	fi
}

# gone ID: wait until no group of release ID is left in the world (its
# deletion takes a little simulated time), or fail.
gone() {
	for _ in $(seq 100); do
		if ! in_world "$1"; then return 0; fi
		sleep 0.1
	done
	die "the group of release $1 is still in the world"
}

step "Starting the local region on 127.0.0.1:$PORT (speed ${SPEED}x)"
"$FERRY" local --listen "127.0.0.1:$PORT" --speed "$SPEED" --world testdata/worlds/demo.json >"$LOG" 2>&1 &
REGION_PID=$!
for _ in $(seq 100); do
	if world >/dev/null 2>&1; then break; fi
	kill -0 "$REGION_PID" 2>/dev/null || die "the local region did not start"
	sleep 0.1
done
world >/dev/null 2>&1 || die "the local region does not answer on $FERRY_LOCAL_ENDPOINT"
note "ready: every AWS call below goes to the local region through the AWS SDK"
note "console: open $FERRY_LOCAL_ENDPOINT/ in a browser to watch the executions (until the demo ends)"

step "1. First deploy of testdata/deploy-test-release.json"
expect 0 deploy --local --poll "$POLL" testdata/deploy-test-release.json
first=$(released)
note "the world now:"
show_world

step "2. A changed release (min_size 2, new user data): a canary, then the blue/green swap"
note "rollout steps [1, \"100%\"]: one new instance serves beside the old group for a minute, then the whole group"
expect 0 deploy --local --poll "$POLL" testdata/demo/deploy-test-v2.json
grep -qF "canary: web at step 2 of 2, the whole group" "$OUT" || die "the deploy did not show the canary's step"
no_cuts
second=$(released)
in_world "$second" || die "no group of release $second in the world"
gone "$first"
note "the new group serves; the old one ($first) is deleted:"
show_world

step "3. A release whose instances never become healthy (AMI ubuntu-broken, timeout 5m)"
expect 1 deploy --local --poll "$POLL" testdata/demo/deploy-test-broken.json
ended "FailureClean: TimeoutError"
broken=$(released)
gone "$broken"
in_world "$second" || die "the group of release $second is gone"
note "nothing of $broken is left; $second still serves:"
show_world

step "4. A halt during a deploy"
expect 0 deploy --local --no-wait testdata/demo/deploy-test-slow.json
slow=$(released)
expect 0 halt --local --poll "$POLL" --reason "bad build" testdata/demo/deploy-test-slow.json
ended "FailureClean: HaltError"
gone "$slow"

step "5. A build that errors once it serves: a bake, its alarm, an instant rollback"
note "bake_seconds 600: the new group serves alone while the old one stands by, out of its load balancers;"
note "the alarm deploy-test-5xx fires during the bake, and the old group is put back before the new one leaves"
expect 1 deploy --local --poll "$POLL" testdata/demo/deploy-test-5xx.json
ended "FailureClean: HaltError: halted: alarm in ALARM: deploy-test-5xx"
grep -qF "rolling back: " "$OUT" || die "the deploy did not show the rollback"
errors=$(released)
gone "$errors"
in_world "$second" || die "the group of release $second is gone"
no_cuts
note "rolled back: $second serves again, nothing of $errors is left, and no connection was cut:"
show_world

step "6. A build that is slower, not broken: automated canary analysis rolls it back"
note "analysis: at the canary step, the new group's DeployTest/Latency (dimension AutoScalingGroupName) is compared"
note "with the serving group's by a Mann-Whitney U test: 30% slower scores 0, below the marginal score of 75,"
note "and the release rolls back like an alarm, though no alarm threshold was crossed"
expect 1 deploy --local --poll "$POLL" testdata/demo/deploy-test-slower.json
ended "canary analysis scored 0"
grep -qF "canary analysis of web: " "$OUT" || die "the deploy did not show its canary analysis"
slower=$(released)
gone "$slower"
in_world "$second" || die "the group of release $second is gone"
no_cuts
note "the outcome keeps the analysis that rolled it back:"
expect 0 show --local "$slower"
grep -qF "analysis  web: score 0, fail" "$OUT" || die "show does not show the canary analysis"

step "7. Spot: a mixed instances fleet in weighted capacity units, an interruption replaced before it lands"
note "mixed_instances: m5.large (1 unit), m5.xlarge and c5.xlarge (2 units); one on-demand instance, then 25% on-demand,"
note "the rest Spot, price-capacity-optimized, with capacity rebalance: min_size 6 is 6 units, not 6 instances"
expect 0 deploy --local --poll "$POLL" testdata/spot-fleet-release.json
spot=$(released)
in_world "$spot" || die "no group of release $spot in the world"
note "EC2 sends a rebalance recommendation and an interruption notice for one Spot instance: the group launches"
note "its replacement first, and the interrupted instance is drained before it goes"
expect 0 local world --endpoint "$FERRY_LOCAL_ENDPOINT" interrupt-spot "$PROJECT/development/web/$spot" 1
no_cuts
show_world

step "8. A queue worker whose termination hook lets it finish its job"
note "the release adds a worker (no load balancer) and a termination lifecycle hook, and web's max_error_rate 5%;"
note "deployed twice: the second retires the first's groups, scaled to zero, and waits for each instance's hook:"
note "the worker finishes its job and completes its lifecycle action itself; only then is its group deleted"
expect 0 deploy --local --poll "$POLL" testdata/demo/deploy-test-worker.json
workers=$(released)
expect 0 deploy --local --poll "$POLL" testdata/demo/deploy-test-worker.json
grep -qE "termination hooks? pending" "$OUT" || die "the deploy did not show the termination hooks it waited for"
latest=$(released)
gone "$workers"
no_cuts
note "the first worker group finished its job and is gone; no connection was cut:"
show_world

step "9. Status of $PROJECT"
expect 0 status --local "$PROJECT"
grep -qE "^  deployed  $latest " "$OUT" || die "ferry status does not show release $latest deployed"
grep -qF "rolled back: " "$OUT" || die "ferry status does not say release $errors was rolled back"

step "10. The lifecycle: plan, an explicit removal, history, rollback, drift healed, destroy"
note "a release without the worker, and without naming it under remove: plan says the deploy would be refused"
expect 1 plan --local testdata/demo/deploy-test-v2.json
grep -qF 'the deploy would delete the serving groups of worker' "$OUT" || die "plan did not name the service left out"
note "the same release naming the worker under remove: plan says what it would do, then the deploy does it"
expect 0 plan --local testdata/demo/deploy-test-web-only.json
grep -qF 'remove services: worker' "$OUT" || die "plan did not say it removes the worker"
expect 0 deploy --local --poll "$POLL" testdata/demo/deploy-test-web-only.json
webonly=$(released)
gone "$latest"
note "every release of the config, newest first:"
expect 0 history --local --limit 4 "$PROJECT" development
note "rollback: the release before, deployed again from the deployer's records (the worker comes back)"
expect 0 rollback --local --poll "$POLL" "$PROJECT" development
restored=$(sed -n 's/^ferry rollback: [^ ]* [^ ]* release \([^ ]*\)$/\1/p' "$OUT" | head -n 1)
[[ -n $restored ]] || die "rollback did not name its release"
gone "$webonly"
expect 0 show --local "$restored"
grep -qF "deploys again the content of release $latest" "$OUT" || die "show does not say what the rollback deploys"
note "drift: someone deletes the worker's group by hand and resizes web; the deployer sees both"
worker_group="$PROJECT/development/worker/$restored" web_group="$PROJECT/development/web/$restored"
in_world "$worker_group" || die "no group $worker_group in the world"
expect 0 local world --endpoint "$FERRY_LOCAL_ENDPOINT" delete-group "$worker_group"
expect 0 local world --endpoint "$FERRY_LOCAL_ENDPOINT" set-capacity "$web_group" 2 3 6
expect 0 status --local --drift "$PROJECT" development
grep -qF "group_missing" "$OUT" || die "status --drift did not see the worker's group gone"
grep -qF "min 2 max 6, not the release's min 2 max 4" "$OUT" || die "status --drift did not see web resized"
note "the release says \"reconcile\": \"heal\": the next reconcile pass (every 15 simulated minutes) deploys its content again"
healed=""
for _ in $(seq "${FERRY_DEMO_HEAL_TRIES:-120}"); do
	if "$FERRY" follow --local --poll "$POLL" "$PROJECT" development >"$OUT" 2>/dev/null; then healed=yes; break; fi
	sleep 0.5
done
[[ -n $healed ]] || die "no heal ran within a minute"
cat "$OUT"
grep -qF "Success" "$OUT" || die "the heal did not succeed"
expect 0 history --local --limit 1 "$PROJECT" development
grep -qF "heal of $restored" "$OUT" || die "history does not show the heal of $restored"
note "destroy: every group of the config retired through the deploy path, the record of what runs removed"
expect 0 destroy --local --yes --poll "$POLL" "$PROJECT" development
gone "$PROJECT/development/"
no_cuts
note "every group was drained out of its load balancers before it went: they are empty, and no connection was cut"
expect 0 status --local "$PROJECT" development
grep -qF "deployed  nothing: destroyed by release" "$OUT" || die "status still shows a release deployed after the destroy"

step "11. A pipeline: development, then staging, then production in two regions"
note "the pipeline file and the release it promotes: every stage deploys the same artifact"
expect 0 pipeline validate testdata/pipelines/deploy-test.json testdata/deploy-test-release.json
artifact=$(sed -n 's/^release .*: artifact \([0-9a-f]\{12\}\).*/\1/p' "$OUT")
[[ -n $artifact ]] || die "pipeline validate did not give the artifact's digest"
note "development deploys it; staging then waits for its soak, production for staging"
expect 0 deploy --local --poll "$POLL" testdata/deploy-test-release.json
expect 0 pipeline status --local testdata/pipelines/deploy-test.json
grep -qE "^  development .* $artifact " "$OUT" || die "pipeline status does not show development running the artifact"
grep -qE "pending: .*soak 30m: " "$OUT" || die "pipeline status does not show staging's soak pending"
note "ferry promote checks a stage's gates before it deploys anything: staging is still soaking"
expect 3 promote --local testdata/pipelines/deploy-test.json testdata/deploy-test-release.json staging
note "promoted by hand, which checks no gate: each target's release, then ferry deploy"
for config in staging production-use1 production-euw1; do
	save "$STAGES/$config.json" pipeline release testdata/pipelines/deploy-test.json testdata/deploy-test-release.json "$config"
	expect 0 deploy --local --poll "$POLL" "$STAGES/$config.json"
done
expect 0 pipeline status --local testdata/pipelines/deploy-test.json
[[ $(grep -cE ' promoted$' "$OUT") == 2 ]] || die "pipeline status does not show staging and production promoted"
grep -qE "^ +euw1: 222222222222 eu-west-1 .* $artifact .* same " "$OUT" || die "production in eu-west-1 does not run the artifact"

step "12. Promotion without a laptop: the deployer runs the pipeline, a person approves production"
PIPELINE=testdata/pipelines/deploy-test.json
note "whoever may deploy each config registers the pipeline there: a promotion deploys a config only through it"
expect 0 pipeline register --local "$PIPELINE"
note "start stores the request, proved as you, and the deployer's state machine runs it: this laptop may close now"
expect 0 pipeline start --local "$PIPELINE" testdata/demo/deploy-test-v2.json
await_promotion "^  production: approval" "production waiting for its approval"
note "development and staging deployed, their soaks over, staging's alarm clear: production waits for a person"
expect 0 pipeline approve --local "$PIPELINE" production
await_promotion "^promotion .*: succeeded$" "the promotion succeeding"
grep -qE "^  production: succeeded, approved by " "$OUT" || die "pipeline status does not name who approved production"
note "a release whose canary alarm only development has: staging refuses it, so production is never deployed"
expect 0 pipeline start --local "$PIPELINE" testdata/demo/deploy-test-canary-alarm.json
await_promotion "^promotion .*: failed \(" "the promotion failing at staging"
grep -qF "staging (FailureClean) did not succeed" "$OUT" || die "the promotion did not fail with staging's deploy"
grep -qF "  production: pending" "$OUT" || die "production was reached after staging failed"

step "13. Deploy events: what the deployer put on each target's default EventBridge bus"
note "each fact as it became true, source ferry (ferry help events): EventBridge rules send them to SNS, a chat room"
note "or GitHub deployment statuses with no code of ferry's in the path; --json prints each detail (ferry schema events)"
expect 0 local events --endpoint "$FERRY_LOCAL_ENDPOINT" --project "$PROJECT"
grep -qF "Release Rolled Back" "$OUT" || die "ferry local events does not show the rollback"
grep -qF "Stage Approved" "$OUT" || die "ferry local events does not show production's approval"

printf '\n%sdemo: every step ended as expected%s\n' "$bold" "$reset"
