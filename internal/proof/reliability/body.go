package reliability

import (
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// copyBody copies an object's body into b and closes it.
func copyBody(b *strings.Builder, obj *s3.GetObjectOutput) (int64, error) {
	defer obj.Body.Close()
	return io.Copy(b, obj.Body)
}
