package pipeline_test

import (
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/pipeline"
)

// A pipeline file is decoded and validated at once (every problem, each
// with its path); its gates are checked against what the caller read.
func Example() {
	_, err := pipeline.Decode([]byte(`{"project_name": "acme/web", "stages": [
		{"config_name": "staging", "targets": [{"account_id": "111111111111", "region": "us-east-1"}], "gates": {"soak_seconds": 600}}]}`))
	fmt.Println(err)

	p, err := pipeline.Decode([]byte(`{"project_name": "acme/web", "stages": [
		{"config_name": "staging", "targets": [{"account_id": "111111111111", "region": "us-east-1"}]},
		{"config_name": "production", "targets": [{"account_id": "222222222222", "region": "us-east-1"}],
		 "gates": {"soak_seconds": 3600, "alarms": ["web-errors"], "approval": true}}]}`))
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	r := pipeline.Readings{Now: now, Artifact: "4f1c2a9e0b7d5e66", Before: []pipeline.TargetReading{{
		Config: "staging", Digest: "4f1c2a9e0b7d5e66", DeployedAt: now.Add(-45 * time.Minute),
		Alarms: map[string]string{"web-errors": "ALARM"},
	}}}
	for _, h := range p.Holds(1, r) {
		fmt.Printf("%s: %s\n", h.Gate, h.Message)
	}
	r.Now = now.Add(time.Hour)
	r.Before[0].Alarms["web-errors"] = "OK"
	r.Approval = &pipeline.ApprovalReading{By: "arn:aws:iam::111111111111:user/alice"}
	fmt.Println(len(p.Holds(1, r)), "holds")
	// Output:
	// bad pipeline: stages[0].gates.soak_seconds: the first stage has no stage before it to soak after
	// soak: soak 1h: 15m left (counted from the stage before's last swap)
	// alarm: alarm web-errors is ALARM in staging
	// approval: the stage needs a person's approval: ferry pipeline approve
	// 0 holds
}
