package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/ferryhq/ferry/client/submit"
	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/fanout"
	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
	"github.com/ferryhq/ferry/internal/release"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// pipelineCommand is ferry pipeline.
type pipelineCommand struct {
	env      Env
	deployer deployerFlags
	asJSON   bool
	// promotion is the promotion approve and halt act on (default: the
	// newest); reason is halt's.
	promotion string
	reason    string
	// alarms makes status read the gate alarms still pending.
	alarms bool
}

func (c *pipelineCommand) spec() commandSpec {
	return commandSpec{
		name:    "pipeline",
		args:    "validate PIPELINE [RELEASE] | status PIPELINE | release PIPELINE RELEASE CONFIG | schema | register PIPELINE | start PIPELINE RELEASE | approve PIPELINE STAGE | halt PIPELINE",
		summary: "Check a pipeline file, and show a project across its stages",
		help: `A pipeline file names a project's stages in order: each a config deployed
to one or more targets (account, region, qualifier) together, with the
environment facts it overrides (capacity, instance types, and the names
of subnets, security groups, load balancers, instance profiles, hook
roles and topics and alarms, which may use {{CONFIG_NAME}}) and the gates before it (a soak after the stage before
succeeded, alarms, an approval). Every stage deploys the same artifact:
the release without its environment facts, named by a digest.

validate checks PIPELINE offline, and with RELEASE that the release can
be promoted through it (the release each target would deploy is valid),
and prints the stages and the artifact's digest. It exits 0 when valid,
1 otherwise, printing one line per problem, "FILE: path: message".

status reads what each target of each stage runs now from the deployer's
records: the release and its artifact's digest, when it was deployed,
whether it runs the artifact of the stage before (parity), its newest
release when that is not the one deployed (a deploy that failed, or
runs) with its outcome, the gates still holding back the next
promotion (a gate alarm pending only in ALARM or missing, the stage before
while it does not serve the artifact; --alarms reads both, else they show
as not read), and every promotion recorded, newest first, with its state
(--promotion ID: that one). It exits 0, or 1 when the deployer cannot be
read.

release prints the release the target deploying CONFIG deploys when
RELEASE is promoted, as a release file (indented JSON, defaults applied,
its user data inlined): save it next to RELEASE, whose asset paths it
keeps, and deploy it with ferry deploy. It exits 1 when the pipeline or
the release is invalid or no target deploys CONFIG.

schema prints the JSON Schema of a pipeline file, for editors.

register writes the pipeline into every config it deploys
(<project>/<config>/_pipeline.json): a promotion deploys a config only
through the pipeline registered there, so whoever may deploy a config
decides which pipeline, with which gates, may promote into it.

start promotes RELEASE through the pipeline without a laptop: it stores
the request (with your identity proof) under the first stage's config and
starts a promotion of the deployer's state machine, which deploys each
stage's targets at once once its gates hold, and stops at the first
stage that does not succeed. It refuses (exit 1, nothing started) a
pipeline not registered in every config it deploys, and returns once
the deployer has recorded the promotion, printing its id, or exits 1
with the deployer's reason for refusing it. ` + pipeline.OnePromotionRule + `

approve approves the newest promotion (or --promotion ID) into STAGE: an
approval with your identity proof, which the deployer counts only for
that promotion, stage and artifact. The proof is valid 15 minutes, so
the deployer verifies the approval when it is given (an approval query)
and records it verified, with who approved and when; approve then
stores it, and prints who approved. The gate counts it whenever the
stage's other gates pass (a soak's end, an hour later), without the
proof. approve refuses (exit 1, nothing written) a stage without an
approval gate, one approved already, and one not waiting at its gates;
it exits 3, nothing written, when the deployer refuses the approval (a
proof expired or not valid, an approver the stage's gates do not
allow). A stage waiting for its approval alone is woken.

halt stops the newest promotion (or --promotion ID) cleanly: no stage
after the one deploying now starts, that stage's deploys roll back, and
a wait for an approval ends; a stage waiting for its gates (a soak, an
alarm) ends at their next check, within 5m. The promotion ends halted.

--json prints every subcommand's result as JSON: validate, status and
release one indented object; register, start, approve and halt one
object a line (as deploy's events), the last the result; a failure is
deploy's {"event":"error",...} line.`,
		exits: []int{exitFailure, exitNotStarted},
	}
}

func (c *pipelineCommand) defineFlags(fs *flag.FlagSet) {
	c.deployer.define(fs)
	fs.BoolVar(&c.asJSON, "json", false, "print the result as JSON")
	fs.StringVar(&c.promotion, "promotion", "", "the promotion id status, approve and halt act on (default: the newest)")
	fs.StringVar(&c.reason, "reason", "", "why halt halts the promotion")
	fs.BoolVar(&c.alarms, "alarms", false, "status reads the gate alarms still pending and whether the stage before serves (a drift query of each of its targets)")
}

var _ subcommander = (*pipelineCommand)(nil)

func (c *pipelineCommand) subcommands() []string {
	names := make([]string, len(c.table()))
	for i, sc := range c.table() {
		names[i] = sc.name
	}
	return names
}

// pipelineSubcommand is one subcommand of ferry pipeline: how many
// arguments it takes (min to max) and what runs it. An error run returns
// without an exit code fails the command with exitFailure.
type pipelineSubcommand struct {
	name     string
	min, max int
	run      func(ctx context.Context, args []string) error
}

// table is ferry pipeline's subcommands, in the order help lists them.
func (c *pipelineCommand) table() []pipelineSubcommand {
	return []pipelineSubcommand{
		{"validate", 1, 2, func(_ context.Context, a []string) error { return c.validate(a) }},
		{"status", 1, 1, func(ctx context.Context, a []string) error { return c.status(ctx, a[0]) }},
		{"release", 3, 3, func(_ context.Context, a []string) error { return c.release(a[0], a[1], a[2]) }},
		{"schema", 0, 0, func(context.Context, []string) error {
			if _, err := c.env.Stdout.Write(pipeline.Schema()); err != nil {
				return exitSilently(exitFailure)
			}
			return nil
		}},
		{"register", 1, 1, func(ctx context.Context, a []string) error { return c.register(ctx, a[0]) }},
		{"start", 2, 2, func(ctx context.Context, a []string) error { return c.start(ctx, a[0], a[1]) }},
		{"approve", 2, 2, func(ctx context.Context, a []string) error { return c.approve(ctx, a[0], a[1]) }},
		{"halt", 1, 1, func(ctx context.Context, a []string) error { return c.haltPromotion(ctx, a[0]) }},
	}
}

// Run runs the subcommand args[0].
func (c *pipelineCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErrorf(c.spec(), "no subcommand given")
	}
	sub, args := args[0], args[1:]
	for _, sc := range c.table() {
		switch {
		case sc.name != sub:
			continue
		case len(args) < sc.min || len(args) > sc.max:
			return usageErrorf(c.spec(), "wrong number of arguments for %s", sub)
		}
		return commandFailure("pipeline "+sub, exitFailure, sc.run(ctx, args))
	}
	return usageErrorf(c.spec(), "unknown subcommand %q", sub)
}

// readPipeline reads and decodes the pipeline file at file.
func readPipeline(file string) (*pipeline.Pipeline, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limits.MaxPipelineBytes+1))
	if err != nil {
		return nil, err
	}
	return pipeline.Decode(data)
}

// pipelineValidation is the --json form of ferry pipeline validate.
type pipelineValidation struct {
	Pipeline string             `json:"pipeline"`
	Valid    bool               `json:"valid"`
	Problems []pipelineProblem  `json:"problems"`
	Project  string             `json:"project,omitempty"`
	Stages   []pipelineStageDoc `json:"stages,omitempty"`
	Release  string             `json:"release,omitempty"`
	// Artifact is the digest of the release's artifact, every stage's.
	Artifact string `json:"artifact,omitempty"`
}

// pipelineProblem is a problem of ferry pipeline validate, with the file
// it is in: the release file's for a path in "release", else the
// pipeline file's.
type pipelineProblem struct {
	File string `json:"file"`
	release.Problem
}

// blameProblems are probs, each in the file it is in: the release's for a
// path in "release" (releaseFile, when given), else the pipeline's.
func blameProblems(probs []release.Problem, pipelineFile string, releaseFile ...string) []pipelineProblem {
	out := make([]pipelineProblem, len(probs))
	for i, p := range probs {
		out[i] = pipelineProblem{File: pipelineFile, Problem: p}
		inRelease := p.Path == "release" || strings.HasPrefix(p.Path, "release.") || strings.HasPrefix(p.Path, "release[")
		if len(releaseFile) > 0 && inRelease {
			out[i].File = releaseFile[0]
		}
	}
	return out
}

// pipelineStageDoc is one stage as ferry pipeline validate shows it.
type pipelineStageDoc struct {
	Config  string                  `json:"config"`
	Targets []pipeline.TargetStatus `json:"targets"`
	Gates   *pipeline.Gates         `json:"gates,omitempty"`
}

func (c *pipelineCommand) validate(args []string) error {
	v, file := checkPipeline(args[0], args[1:]...)
	if c.asJSON {
		if err := writeEvent(c.env.Stdout, evPipelineValidate, v, true); err != nil {
			return exitSilently(exitFailure)
		}
	} else {
		writePipelineValidation(c.env.Stdout, v, file)
	}
	if !v.Valid {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("ferry pipeline validate: %s is invalid", file), Shown: c.asJSON}
	}
	return nil
}

// checkPipeline checks the pipeline file pipelineFile and, when given,
// that the release file releaseFile[0] can be promoted through it. file
// is the file the problems are of: the release's once the pipeline is
// valid.
func checkPipeline(pipelineFile string, releaseFile ...string) (v pipelineValidation, file string) {
	v = pipelineValidation{Pipeline: pipelineFile, Problems: []pipelineProblem{}}
	file = pipelineFile
	p, err := readPipeline(pipelineFile)
	if err == nil && len(releaseFile) > 0 {
		v.Release = releaseFile[0]
		r, err := release.ReadTemplate(v.Release)
		if err == nil {
			err = submit.HashAssets(r, v.Release)
		}
		if err != nil { // the release file's own problems
			v.Problems = blameProblems(problemsOfError(err), v.Release, v.Release)
			return v, v.Release
		}
		if err := p.Check(r); err != nil {
			v.Problems = blameProblems(problemsOfError(err), pipelineFile, v.Release)
			return v, v.Problems[0].File
		}
		if v.Artifact, err = pipeline.Digest(r); err != nil {
			v.Problems = blameProblems(problemsOfError(err), v.Release, v.Release)
			return v, v.Release
		}
	}
	if err != nil {
		v.Problems = blameProblems(problemsOfError(err), pipelineFile)
		return v, file
	}
	v.Valid, v.Project = true, p.ProjectName
	for _, s := range p.Stages {
		doc := pipelineStageDoc{Config: s.ConfigName, Gates: s.Gates}
		for _, t := range s.Targets {
			doc.Targets = append(doc.Targets, pipeline.TargetStatus{Name: t.Name, Config: pipeline.TargetConfig(s, t),
				AccountID: t.AccountID, Region: t.Region, Qualifier: t.Qualifier})
		}
		v.Stages = append(v.Stages, doc)
	}
	return v, file
}

// artifactOf hashes the assets of r, read from the release file file,
// checks p can promote it and returns its artifact's digest.
func artifactOf(p *pipeline.Pipeline, r *release.Release, file string) (string, error) {
	if err := submit.HashAssets(r, file); err != nil {
		return "", err
	}
	if err := p.Check(r); err != nil {
		return "", err
	}
	return pipeline.Digest(r)
}

// release prints the release the target of config deploys when the
// release file releaseFile is promoted through the pipeline file
// pipelineFile.
func (c *pipelineCommand) release(pipelineFile, releaseFile, config string) error {
	p, err := readPipeline(pipelineFile)
	if err != nil {
		return err
	}
	base, err := release.ReadTemplate(releaseFile)
	if err != nil {
		return err
	}
	if err := p.Check(base); err != nil {
		return err
	}
	var configs []string
	for i, s := range p.Stages {
		for j, t := range s.Targets {
			if pipeline.TargetConfig(s, t) != config {
				configs = append(configs, pipeline.TargetConfig(s, t))
				continue
			}
			r, err := p.Release(base, i, j)
			if err != nil {
				return err
			}
			canon, err := release.Canonical(r)
			if err != nil {
				return err
			}
			var v any
			if err := json.Unmarshal(canon, &v); err != nil {
				return err
			}
			return writeIndentedJSON(c.env.Stdout, v)
		}
	}
	return fmt.Errorf("no target of %s deploys config %q (its configs: %s)", pipelineFile, config, strings.Join(configs, ", "))
}

// writePipelineValidation prints a validation for people: the problems
// of file, or the stages and the artifact.
func writePipelineValidation(w io.Writer, v pipelineValidation, file string) {
	if !v.Valid {
		for _, p := range v.Problems {
			fmt.Fprintf(w, "%s: %s\n", p.File, p.Problem)
		}
		return
	}
	targets := 0
	for _, s := range v.Stages {
		targets += len(s.Targets)
	}
	fmt.Fprintf(w, "pipeline %s: %d %s, %d %s\n", v.Project, len(v.Stages), plural(len(v.Stages), "stage", "stages"), targets, plural(targets, "target", "targets"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row(tw, "  stage", "target", "config", "gates")
	for _, s := range v.Stages {
		for j, t := range s.Targets {
			stage, gates := "", ""
			if j == 0 {
				stage, gates = s.Config, describeGates(s.Gates)
			}
			row(tw, "  "+firstNonEmpty(stage, " "), describeTarget(t), t.Config, gates)
		}
	}
	tw.Flush()
	if v.Artifact != "" {
		fmt.Fprintf(w, "release %s: artifact %s, deployed by every stage\n", v.Release, v.Artifact)
	}
}

// describeTarget is a target in one cell: its name, account, region and
// qualifier.
func describeTarget(t pipeline.TargetStatus) string {
	parts := []string{t.AccountID, t.Region}
	if t.Qualifier != "" {
		parts = append(parts, "("+t.Qualifier+")")
	}
	if t.Name != "" {
		parts = append([]string{t.Name + ":"}, parts...)
	}
	return strings.Join(parts, " ")
}

// describeGates is a stage's gates in one cell.
func describeGates(g *pipeline.Gates) string {
	if g == nil {
		return "-"
	}
	var parts []string
	if g.SoakSeconds > 0 {
		parts = append(parts, "soak "+pipeline.FormatDuration(time.Duration(g.SoakSeconds)*time.Second))
	}
	if n := len(g.Alarms); n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, "alarm", "alarms")))
	}
	if g.Approval {
		parts = append(parts, "approval")
	}
	return firstNonEmpty(strings.Join(parts, ", "), "-")
}

// pipelineStatus is the --json form of ferry pipeline status.
type pipelineStatus struct {
	Pipeline string                 `json:"pipeline"`
	Project  string                 `json:"project"`
	Stages   []pipeline.StageStatus `json:"stages"`
	// Promotion is the newest promotion through the pipeline (or the one
	// --promotion names), as the deployer records it (its approval tokens
	// left out); nil for none.
	Promotion *ledger.PromotionRecord `json:"promotion,omitempty"`
	// Promotions are every promotion recorded through the pipeline,
	// newest first (only the one --promotion names, with it).
	Promotions []ledger.PromotionRecord `json:"promotions"`
}

func (c *pipelineCommand) status(ctx context.Context, file string) error {
	p, d, err := c.open(ctx, file)
	if err != nil {
		return err
	}
	var read func(context.Context, *deployer, *pipeline.Pipeline, []pipeline.StageStatus) (map[string]pipeline.TargetRead, error)
	if c.alarms {
		read = c.readGates
	}
	stages, _, err := readPipelineStatus(ctx, d, p, read)
	if err != nil {
		return err
	}
	ps := pipelineStatus{Pipeline: file, Project: p.ProjectName, Stages: stages}
	if ps.Promotions, err = readPromotions(ctx, d, p); err != nil {
		return err
	}
	if c.promotion != "" {
		i := slices.IndexFunc(ps.Promotions, func(r ledger.PromotionRecord) bool { return r.PromotionID == c.promotion })
		if i < 0 {
			return fmt.Errorf("no promotion %s of %s is recorded", c.promotion, p.ProjectName)
		}
		ps.Promotions = ps.Promotions[i : i+1]
	}
	if len(ps.Promotions) > 0 {
		if err := readVerifiedApprovals(ctx, d, p, &ps.Promotions[0]); err != nil {
			return err
		}
		ps.Promotion = &ps.Promotions[0]
	}
	if c.asJSON {
		return writeEvent(c.env.Stdout, evPipelineStatus, ps, true)
	}
	writePipelineStatus(c.env.Stdout, ps)
	return nil
}

// describePromotionStatus is a promotion's status, and why it ended so
// when it says.
func describePromotionStatus(rec *ledger.PromotionRecord) string {
	if rec.Why == "" {
		return rec.Status
	}
	return rec.Status + " (" + rec.Why + ")"
}

// readPromotions reads every promotion recorded through p, newest
// first, their approval tokens left out.
func readPromotions(ctx context.Context, d *deployer, p *pipeline.Pipeline) ([]ledger.PromotionRecord, error) {
	l := ledger.New(d.s3, d.cfg.Bucket)
	first := pipeline.TargetConfig(p.Stages[0], p.Stages[0].Targets[0])
	ids, err := l.Promotions(ctx, p.ProjectName, first)
	if err != nil {
		return nil, fmt.Errorf("listing the promotions of %s: %w", p.ProjectName, err)
	}
	recs := make([]ledger.PromotionRecord, 0, len(ids))
	for _, id := range ids {
		rec, found, err := l.GetPromotion(ctx, p.ProjectName, first, id)
		if err != nil {
			return nil, fmt.Errorf("reading promotion %s: %w", id, err)
		}
		if !found {
			continue
		}
		if err := settleRecord(ctx, d, &rec); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// readVerifiedApprovals fills in the approver of each stage of the running
// promotion rec that waits at its gates with none recorded, when the
// deployer verified an approval of it as it was given (ferry pipeline
// approve; verifiedApproval). The gate records the approver in the
// promotion at its next check; status shows it from the moment it is
// verified, and no longer holds the stage for an approval.
func readVerifiedApprovals(ctx context.Context, d *deployer, p *pipeline.Pipeline, rec *ledger.PromotionRecord) error {
	if rec.Status != ledger.PromotionRunning {
		return nil
	}
	l := ledger.New(d.s3, d.cfg.Bucket)
	for i := range rec.Stages {
		s := &rec.Stages[i]
		if s.ApprovedBy != "" || (s.Status != ledger.PromotionWaiting && s.Status != ledger.PromotionApproval) {
			continue
		}
		v, found, err := verifiedApproval(ctx, l, p, rec, s.Config)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		s.ApprovedBy, s.ApprovedByID, s.ApprovedAt = v.ApprovedBy, v.ApprovedByID, v.VerifiedAt
		s.ApprovalVerified, s.ApprovalGivenAt = v.Verified, v.GivenAt
		s.Held = slices.DeleteFunc(s.Held, func(h string) bool { return strings.HasPrefix(h, pipeline.ApprovalNeeded) })
	}
	return nil
}

// verifiedApproval reads the approval of the promotion rec into stage as
// the gate reads it: the approval stored where approvers write it
// (naming.ApprovalKey) and the deployer's record that it verified an
// approval of that sum (ledger.VerifiedApproval) for this promotion,
// stage and artifact. found is false without both, or when the approval
// does not decode: the gate refuses it then, saying why.
func verifiedApproval(ctx context.Context, l *ledger.Ledger, p *pipeline.Pipeline, rec *ledger.PromotionRecord, stage string) (ledger.VerifiedApproval, bool, error) {
	key := naming.ApprovalKey(p.ProjectName, stage, rec.PromotionID)
	raw, found, err := l.GetClientObject(ctx, key, limits.MaxStateObjectBytes)
	if err != nil {
		return ledger.VerifiedApproval{}, false, fmt.Errorf("reading the approval of %s at %s: %w", stage, key, err)
	}
	var a pipeline.Approval
	if !found || json.Unmarshal(raw, &a) != nil {
		return ledger.VerifiedApproval{}, false, nil
	}
	sum, err := a.Hash()
	if err != nil {
		return ledger.VerifiedApproval{}, false, nil
	}
	first := pipeline.TargetConfig(p.Stages[0], p.Stages[0].Targets[0])
	v, found, err := l.GetVerifiedApproval(ctx, p.ProjectName, first, rec.PromotionID, stage, sum)
	if err != nil {
		return v, false, fmt.Errorf("reading the verified approval of %s: %w", stage, err)
	}
	return v, found && v.PromotionID == rec.PromotionID && v.Stage == stage && v.Digest == rec.Digest, nil
}

// settleRecord leaves rec's approval tokens out and, when it says it runs
// but its execution ended, says how the execution ended.
func settleRecord(ctx context.Context, d *deployer, rec *ledger.PromotionRecord) error {
	for i := range rec.Stages {
		rec.Stages[i].ApprovalToken = ""
	}
	if rec.Status != ledger.PromotionRunning || rec.Execution == "" {
		return nil
	}
	// A promotion whose last write failed (S3 refused it) ended
	// without its record saying so: its execution says how.
	out, err := d.sfn.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(rec.Execution)})
	if err != nil {
		return fmt.Errorf("reading promotion %s's execution: %w", rec.PromotionID, err)
	}
	if out.Status != sfntypes.ExecutionStatusRunning {
		rec.Status = "ended"
		rec.Why = fmt.Sprintf("its execution ended %s (%s) before its record said so", out.Status,
			firstNonEmpty(strings.TrimSpace(aws.ToString(out.Error)+": "+failure.Message(aws.ToString(out.Cause))), "no error"))
	}
	return nil
}

// readPipelineStatus reads what every target of p runs from the
// deployer's records and returns p's status at the deployer's now
// (pipeline.Status), and that now: the records' times are on the
// deployer's clock (the local region's runs scaled). With readGates,
// what the gates still pending check in the stages before is read with
// it (nil: left unread, which holds).
func readPipelineStatus(ctx context.Context, d *deployer, p *pipeline.Pipeline,
	readGates func(context.Context, *deployer, *pipeline.Pipeline, []pipeline.StageStatus) (map[string]pipeline.TargetRead, error),
) ([]pipeline.StageStatus, time.Time, error) {
	l := ledger.New(d.s3, d.cfg.Bucket)
	type at struct{ i, j int }
	var where []at
	for i, s := range p.Stages {
		for j := range s.Targets {
			where = append(where, at{i, j})
		}
	}
	found := make([]*pipeline.Deployed, len(where))
	err := fanout.Each(ctx, recordReads, len(where), func(ctx context.Context, k int) error {
		s := p.Stages[where[k].i]
		config := pipeline.TargetConfig(s, s.Targets[where[k].j])
		dep, err := readDeployed(ctx, d, l, p.ProjectName, config)
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.ProjectName, config, err)
		}
		found[k] = dep
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	byTarget := map[at]*pipeline.Deployed{}
	for k, w := range where {
		byTarget[w] = found[k]
	}
	now, err := d.now(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	deployed := func(i, j int) *pipeline.Deployed { return byTarget[at{i, j}] }
	st := p.Status(deployed, nil, now)
	if readGates == nil {
		return st, now, nil
	}
	read, err := readGates(ctx, d, p, st)
	if err != nil {
		return nil, time.Time{}, err
	}
	return p.Status(deployed, read, now), now, nil
}

// readGates reads what the gates of the stages not promoted yet check in
// their stage before, when it runs one artifact (readStagesBefore).
func (c *pipelineCommand) readGates(ctx context.Context, d *deployer, p *pipeline.Pipeline, st []pipeline.StageStatus) (map[string]pipeline.TargetRead, error) {
	var stages []int
	for i := 1; i < len(p.Stages); i++ {
		if !st[i].Promoted && st[i-1].Artifact != "" {
			stages = append(stages, i)
		}
	}
	return readStagesBefore(ctx, c.env, d, p, stages)
}

// readStagesBefore reads, with a drift query of each target of the stage
// before each of stages, what their gates check there: the states of
// their gate alarms, and whether its release serves as the deployer's
// promotion gate reads it (the deployer answers with that one reading).
// By config.
func readStagesBefore(ctx context.Context, env Env, d *deployer, p *pipeline.Pipeline, stages []int) (map[string]pipeline.TargetRead, error) {
	names := map[string][]string{}
	for _, i := range stages {
		prev := p.Stages[i-1]
		for _, t := range prev.Targets {
			config := pipeline.TargetConfig(prev, t)
			var alarms []string
			if g := p.Stages[i].Gates; g != nil {
				alarms = g.Alarms
			}
			names[config] = append(names[config], alarms...) // a key for each target

		}
	}
	read := map[string]pipeline.TargetRead{}
	for _, config := range slices.Sorted(maps.Keys(names)) {
		q := execution.DriftQuery{ProjectName: p.ProjectName, ConfigName: config, Alarms: names[config], Serving: true}
		drift, err := askDrift(ctx, env, d, q)
		if err != nil {
			return nil, fmt.Errorf("reading the gates of the stage before in %s %s: %w", p.ProjectName, config, err)
		}
		tr := pipeline.TargetRead{Serving: drift.Serving}
		if len(q.Alarms) > 0 {
			tr.Alarms = map[string]string{}
			for _, a := range drift.Alarms {
				tr.Alarms[a.Name] = a.State
			}
		}
		read[config] = tr
	}
	return read, nil
}

// readDeployed reads what project/config runs now: its current release
// with its artifact's digest, the release holding its lock, and its
// newest release with its outcome when that is not the current one. nil
// when it has no release.
func readDeployed(ctx context.Context, d *deployer, l *ledger.Ledger, project, config string) (*pipeline.Deployed, error) {
	head, err := readHead(ctx, d, l, project, config)
	if err != nil {
		return nil, err
	}
	ids, err := l.Releases(ctx, project, config)
	if err != nil || (head.current == nil && head.holder == nil && len(ids) == 0) {
		return nil, err
	}
	var dep pipeline.Deployed
	if h := head.holder; h != nil {
		dep.Running = h.ReleaseID
	}
	if len(ids) > 0 && !head.deployed(ids[0]) {
		o, found, err := l.GetOutcome(ctx, project, config, ids[0])
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", ids[0], err)
		}
		dep.Latest, dep.LatestEnd = ids[0], releaseStatusOf(ids[0], o, found, head.holder).End
	}
	if cur := head.current; cur != nil {
		dep.ReleaseID, dep.DeployedAt = cur.ReleaseID, cur.DeployedAt
		r, _, err := l.VerifiedRelease(ctx, project, config, cur.ReleaseID)
		var gone *failure.BadReleaseError
		switch {
		case errors.As(err, &gone):
			// Its objects expired (or never decode, or changed since
			// Validate): what it runs is known by id only.
			return &dep, nil
		case err != nil:
			return nil, fmt.Errorf("release %s: %w", cur.ReleaseID, err)
		}
		if dep.Digest, err = pipeline.Digest(r); err != nil {
			return nil, err
		}
	}
	return &dep, nil
}

// writePipelineStatus prints the matrix for people: a row per target,
// each stage's promotion (promoted, ready, or the gates pending) on its
// first row.
func writePipelineStatus(w io.Writer, ps pipelineStatus) {
	fmt.Fprintf(w, "pipeline %s\n", ps.Project)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row(tw, "  stage", "target", "config", "release", "artifact", "age", "parity", "latest", "promotion")
	for i, s := range ps.Stages {
		for j, t := range s.Targets {
			stage, promotion := " ", ""
			if j == 0 {
				stage, promotion = s.Config, describePromotion(ps.Stages, i)
			}
			rel, artifact, age := "none", "-", "-"
			if t.ReleaseID != "" {
				rel, artifact, age = t.ReleaseID, firstNonEmpty(pipeline.ShortDigest(t.Digest), "unknown"), formatAge(time.Duration(t.AgeSeconds)*time.Second)
			}
			row(tw, "  "+stage, describeTarget(t), t.Config, rel, artifact, age, t.Parity, describeLatest(t.Deployed), promotion)
		}
	}
	tw.Flush()
	for k := range ps.Promotions {
		rec := &ps.Promotions[k]
		fmt.Fprintf(w, "promotion %s of artifact %s, started by %s: %s\n", rec.PromotionID, pipeline.ShortDigest(rec.Digest),
			firstNonEmpty(rec.StartedBy, rec.StartedByName), describePromotionStatus(rec))
		if k > 0 {
			continue // the newest one's stages only
		}
		for _, st := range rec.Stages {
			line := "  " + st.Config + ": " + st.Status
			if st.ApprovedBy != "" {
				line += ", approved by " + st.ApprovedBy
			}
			if len(st.Held) > 0 && st.Status != ledger.PromotionSucceeded {
				line += " (" + strings.Join(st.Held, "; ") + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
}

// describeLatest is a target's newest release when it is not the one
// deployed: how it ended (or that it runs) and its id; "-" for none.
func describeLatest(d pipeline.Deployed) string {
	if d.Latest == "" {
		return "-"
	}
	return firstNonEmpty(d.LatestEnd, "no outcome") + " " + d.Latest
}

// describePromotion is where the promotion of the artifact of the stage
// before stage i into it stands.
func describePromotion(stages []pipeline.StageStatus, i int) string {
	s := stages[i]
	switch {
	case i == 0:
		return "-"
	case s.Promoted:
		return "promoted"
	case len(s.Pending) == 0:
		return "ready: every gate holds for " + pipeline.ShortDigest(stages[i-1].Artifact)
	}
	return "pending: " + strings.Join(s.Pending, "; ")
}

// formatAge is a duration as people read an age: "45s", "12m", "3h5m",
// "2d4h".
func formatAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
