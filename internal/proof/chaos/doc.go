// Package chaos owns ferry's chaos harness (make chaos): a world that
// fights back, and invariants judged from outside ferry.
//
// A Scenario is made from a seed (Generate: the same seed, the same
// scenario, the same run): a world (instances' CPU, so ferry's scaling
// alarms fire or not; the classic load balancers' connection draining), and steps at
// moments of virtual time after the reference release is deployed:
// releases (bakes, canary steps, removed services, changed user data and
// capacities, instances that crash before or after passing their checks
// or boot slowly, mixed Spot fleets with or without capacity rebalance,
// a build 60% slower or erring three times as often, a canary analysis
// of the builds' latency and errors),
// world events (an instance killed, a group's capacity
// set, a group detached from a load balancer, processes suspended, a zone
// impaired, launches failing, an instance protected from scale-in or put
// in Standby, Spot instances interrupted by EC2), operator actions (halt, a second release,
// rollback, destroy, unlock, a reconcile pass, a heal) and call faults
// (throttling, 5xx on the n-th call of an operation by ferry's roles,
// GetMetricData and PutEvents among them; new groups hidden from their
// first lookups). Options.Moves adds
// releases that drop a load balancer and releases that move the config
// between us-east-1 and us-west-2 (a copy of it, in the same account),
// with move_from naming where it is; a rollback across a move says it
// too. The checker keys load balancers by region (Where): a move retires
// the old region's on purpose. Options.Promotions adds promotions (ferry
// pipeline register and start, through the real promotion branch): a
// release through the pipeline qa -> production, qa being a copy of
// production's resources (addQA), production gated by a soak, the gate
// alarm read in qa and, drawn, an approval; with operator actions
// against the running promotion (ferry pipeline approve, ferry pipeline
// halt) and the gate alarm flipping into ALARM for a while (the world's
// owner's PutMetricAlarm), while the other steps go on (world events hit
// qa's fleet too). A promotion still running giveUp after the last step
// is halted, as an operator would. Options.LaunchHooks gives the
// releases of about one seed in three an autoscaling:EC2_INSTANCE_LAUNCHING
// hook of a drawn heartbeat timeout (drawn on a stream of its own: the
// seed's other steps stay what they are without it), whose instances
// complete its action at the end of their boot, abandon it, or leave it
// to time out (ferry's hooks then CONTINUE); with operators completing
// (CONTINUE, ABANDON) a waiting instance's action, by its id or its
// token, or recording a heartbeat for it. Not generated yet: account
// moves.
//
// Run plays a scenario on a local region (package region, discrete-event
// virtual time) and judges it with a Checker that never reads ferry's
// records or its executions' state to decide what should serve: its
// model knows which releases it submitted and how each execution ended
// as Step Functions reports it, and it sees every change of the simulated
// world (sim.World.Observe: every event of the world's own, every
// mutating call with its caller and the world just before and after).
// The predicates:
//
//   - serving (a): every load balancer and target group the serving
//     release names keeps its healthy target; no call of ferry's takes
//     one below it (what the world takes away is the world's), nor
//     leaves one dark with no group attached;
//   - drain (b): no call of ferry's takes a healthy instance out of a
//     draining load balancer at once, deletes a group while an instance
//     of it is healthy or draining in a load balancer, or ends an
//     instance's pending termination hook;
//   - named (c): at the end of each operation (an execution ending with
//     no other running) and of the run, every ferry-tagged group (not
//     being deleted), launch template and alarm of the project-config is
//     named by a record (current, standby, deleting, an outcome's
//     leftovers) — this one reads the records, as it checks them;
//   - claims (d): at the same moments, the current record names the
//     release the executions' ends say serves, and each of its groups
//     exists; at the end of the run, once the world has settled, each
//     (unless the world meddled with it) serves in every load balancer
//     its release names;
//   - ends (e): every execution reaches an end state (a promotion's, and
//     each stage deploy it runs, too);
//   - promotion: as a promotion's deploy of a stage starts (Step
//     Functions reports the nested execution), the world shows the stage
//     before serving the promotion's release (each of its services has a
//     group tagged with it, with a healthy instance in every load
//     balancer and target group it names), no gate alarm in ALARM or
//     missing, and the approval given if the stage needs one (CheckStage);
//   - analysis: a release under canary analysis whose build is clearly
//     worse than every build its config's groups run as it starts (by
//     the world's images: a judged metric past the previous build's by
//     more than three tolerances) never ends Success (clearlyWorse);
//   - pending: at every change of the world (ferry's or its own), no
//     instance waiting on a launching hook or proceeding from it
//     (Pending:Wait, Pending:Proceed) is healthy in a load balancer or
//     target group, by the load balancers' own registrations;
//   - stable: the first call of a release's own role session that takes
//     an instance of the release serving its config out of service (a
//     swap, a bake's detach) comes a whole stability window (its
//     services' shortest) after the world first showed the release's
//     own fleet ready, and after an instance of its groups last went;
//     each moment taken as the change before the one that showed it (the
//     earliest it can have been so: health is a function of time between
//     changes);
//   - events: at the end of the run, the deploy events of every deploy
//     it started keep reliability.CheckEvents' rules, judged from the
//     bus and the ends Step Functions reports (Release Started first,
//     one terminal event saying that end, retries repeating an id).
//
// A promotion's stage deploy is a deploy: the checker follows it as a
// release of its stage's config (its model is per config), so (a)-(e)
// judge it as they judge a direct one, and (c) and (d) read each config's
// records. Each break of (a) or (b) counts a cut connection.
//
// Shrink reduces a failing scenario to a minimal one (dropping steps one
// at a time while it still fails); Scenario.Encode gives the argument
// that replays it: go run ./internal/proof/chaos/cmd -seed N -scenario '...'.
// RunSeeds runs many seeds on a bounded pool of workers (make chaos).
// Every seed that ever failed is a named regression in the package's
// tests, with what broke it.
//
// The package is a proof tool: the Lambda never links it (make thin).
package chaos
