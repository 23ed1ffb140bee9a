package bench

import (
	"math"
	"slices"
	"strings"
	"time"
)

// AWS's prices a deploy pays for, in US dollars, in us-east-1, as AWS's
// pricing pages gave them on PricesAt. A deploy's cost (Cost) is its
// Step Functions state transitions, its Lambda requests and GB-seconds
// and its S3 requests; the AWS API calls of the target accounts are
// free.
const (
	PricesAt = "2026-11-25"
	// StepFunctionsTransitionUSD: Standard workflows, $0.025 per 1,000
	// state transitions (retries included).
	StepFunctionsTransitionUSD = 0.025 / 1000
	// LambdaRequestUSD: $0.20 per million requests.
	LambdaRequestUSD = 0.20 / 1e6
	// LambdaGBSecondUSD: Arm (Graviton), $0.0000133334 per GB-second, in
	// the first 7.5 billion GB-seconds a month.
	LambdaGBSecondUSD = 0.0000133334
	// S3WriteUSD: PUT, COPY, POST and LIST requests (S3 Standard), $0.005
	// per 1,000; DELETE is free.
	S3WriteUSD = 0.005 / 1000
	// S3ReadUSD: GET, HEAD and other requests, $0.0004 per 1,000.
	S3ReadUSD = 0.0004 / 1000
)

// PreviousLambdaMemoryMB is the deployer Lambda's memory before it was
// sized from the measured heap (tuning.DeployerLambdaMemoryMB).
const PreviousLambdaMemoryMB = 1024

// Cost is what a measured release cost on AWS with a Lambda of memoryMB:
// its state transitions, Lambda invocations and billed GB-seconds (each
// invocation's modelled call time and its handler's run time, rounded up
// to the millisecond as Lambda bills), and its S3 requests.
func Cost(m *Measurement, memoryMB int) float64 {
	usd := float64(m.Transitions)*StepFunctionsTransitionUSD + float64(m.Invocations)*LambdaRequestUSD
	usd += m.LambdaBilled.Seconds() * float64(memoryMB) / 1024 * LambdaGBSecondUSD
	for op, n := range m.ByOp {
		switch {
		case !strings.HasPrefix(op, "s3:"), op == "s3:DeleteObject":
		case op == "s3:GetObject", op == "s3:HeadObject":
			usd += float64(n) * S3ReadUSD
		default:
			usd += float64(n) * S3WriteUSD
		}
	}
	return usd
}

// billed is one invocation's billed duration: d rounded up to the
// millisecond.
func billed(d time.Duration) time.Duration {
	return max(time.Millisecond, (d+time.Millisecond-1)/time.Millisecond*time.Millisecond)
}

// Dist is a figure's distribution over a cell's seeds.
type Dist struct {
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Seeds  int     `json:"seeds"`
}

// distOf is xs' distribution: the median, the 95th percentile (nearest
// rank), the least and the most.
func distOf(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(0.95*float64(len(s)))) - 1
	return Dist{Median: round(median(s), 6), P95: s[max(0, rank)], Min: s[0], Max: s[len(s)-1], Seeds: len(s)}
}
