package region

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/pipeline"
)

// StartPromotion stores q (a promotion request as `ferry pipeline start`
// makes it, given an identity proof pre-signed in process as the local
// caller unless it has one) at its naming.PromotionRequestKey and starts
// its execution, as the client does through the APIs. It is for
// in-process callers (tests); the pipelines it names must be registered
// in the configs it deploys (naming.PipelineKey) for it to get far.
func (r *Region) StartPromotion(ctx context.Context, q *pipeline.Request) (*asl.Execution, error) {
	if q.Identity == nil {
		sum, err := q.IdentityHash()
		if err != nil {
			return nil, fmt.Errorf("region: start promotion: %w", err)
		}
		if q.Identity, err = r.Signer().Prove(ctx, sum); err != nil {
			return nil, fmt.Errorf("region: start promotion: %w", err)
		}
	}
	raw, err := q.Canonical()
	if err != nil {
		return nil, fmt.Errorf("region: start promotion: %w", err)
	}
	project, first := q.Pipeline.ProjectName, q.FirstConfig()
	if _, err := r.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(r.info.Bucket), Key: aws.String(naming.PromotionRequestKey(project, first, q.PromotionID)),
		Body: bytes.NewReader(raw),
	}); err != nil {
		return nil, fmt.Errorf("region: start promotion: %w", err)
	}
	input, err := json.Marshal(execution.PromotionInput{Promotion: raw})
	if err != nil {
		return nil, err
	}
	x, _, err := r.Start(naming.PromotionExecutionName(project, first, q.PromotionID), input)
	return x, err
}
