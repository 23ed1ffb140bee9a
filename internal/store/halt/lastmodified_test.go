package halt_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/store/halt"
)

// noLastModified answers GetObject with body and no Last-Modified
// header: the field is optional in GetObject's response (API Reference,
// GetObject: "LastModified ... Type: Timestamp", not required), and a
// proxy or an S3-compatible store may leave it out.
type noLastModified struct {
	halt.S3
	body string
}

func (n noLastModified) GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	return &s3.GetObjectOutput{Body: io.NopCloser(strings.NewReader(n.body)), ContentLength: aws.Int64(int64(len(n.body))),
		ETag: aws.String(`"e"`)}, nil
}

// TestMarkerWithoutLastModifiedCounts: a marker whose written time S3
// does not report cannot be proven older than the execution: it is a
// halt (fail closed), readable or not.
func TestMarkerWithoutLastModifiedCounts(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       *halt.Marker
	}{
		{"readable", `{"by":"alice","reason":"stop"}`, &halt.Marker{By: "alice", Reason: "stop"}},
		{"unreadable", "garbage", &halt.Marker{Reason: halt.UnreadableReason}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := halt.New(noLastModified{body: tc.body}, bucket)
			got, err := h.Check(t.Context(), project, config, t0)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
