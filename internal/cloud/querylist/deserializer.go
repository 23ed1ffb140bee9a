package querylist

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sdkDeserializer is the ID of the middleware an SDK operation decodes
// its answer with.
const sdkDeserializer = "OperationDeserializer"

// swap is an API option (the clients' Options.APIOptions) that, on the
// operation op alone, puts a deserializer in front of the SDK's own:
// it cuts the long lists out of a successful answer (answer.cut), lets
// the SDK decode the rest, and grafts the lists into its result. An
// answer the cut does not read, or whose rest the SDK does not decode
// with as many owners as the cut counted, is decoded by the SDK whole,
// as is every failure.
func swap(op string, a answer) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		if s.ID() != op {
			return nil
		}
		sdk, ok := s.Deserialize.Get(sdkDeserializer)
		if !ok {
			return fmt.Errorf("querylist: %s has no %s to decode the rest of its answers", op, sdkDeserializer)
		}
		_, err := s.Deserialize.Swap(sdkDeserializer, &deserializer{sdk: sdk, answer: a})
		return err
	}
}

type deserializer struct {
	sdk    middleware.DeserializeMiddleware
	answer answer
}

func (*deserializer) ID() string { return sdkDeserializer }

func (d *deserializer) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if err != nil || !ok || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return d.sdk.HandleDeserialize(ctx, in, answered{out, md, err})
	}
	body, readErr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if readErr == nil {
		if stripped, lists, owners, ok := d.answer.cut(body); ok {
			resp.Body = io.NopCloser(bytes.NewReader(stripped))
			rest, restMD, err := d.sdk.HandleDeserialize(ctx, in, answered{out, md, nil})
			if n, ok := d.answer.count(rest.Result); err == nil && ok && n == owners {
				for _, l := range lists {
					l.graft(rest.Result)
				}
				restMD.Set(decodedKey{}, true)
				return rest, restMD, nil
			}
		}
	}
	// The SDK alone, on the answer as it came (and its read's failure).
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), failing{readErr}))
	out.Result = nil
	return d.sdk.HandleDeserialize(ctx, in, answered{out, md, nil})
}

// decodedKey marks, in an answer's metadata, lists decoded here.
type decodedKey struct{}

// Decoded says whether the lists of the answer whose metadata
// (ResultMetadata) md is were decoded here; false when the SDK decoded
// it whole (an answer the fast path stood aside from, another
// operation, a client without the option).
func Decoded(md middleware.Metadata) bool {
	v, _ := md.Get(decodedKey{}).(bool)
	return v
}

// answered is the rest of the stack for the SDK's deserializer: the
// answer already received.
type answered struct {
	out middleware.DeserializeOutput
	md  middleware.Metadata
	err error
}

func (a answered) HandleDeserialize(context.Context, middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
	return a.out, a.md, a.err
}

// failing reads nothing more and fails with err (io.EOF when nil).
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) {
	if f.err == nil {
		return 0, io.EOF
	}
	return 0, f.err
}
