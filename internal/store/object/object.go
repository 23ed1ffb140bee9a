package object

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/cloud"
)

// API is the S3 API a Store calls.
type API interface {
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(ctx context.Context, params *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// DeleteAPI is the S3 API a Deletable store calls.
type DeleteAPI interface {
	API
	DeleteObject(ctx context.Context, params *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

var (
	_ API       = (*s3.Client)(nil)
	_ DeleteAPI = (*s3.Client)(nil)
)

// Errors says how the owner of some objects names their failures.
type Errors struct {
	// Prefix begins the name of every operation ("ledger: ").
	Prefix string
	// Refuse makes the error of an operation that failed for a reason
	// other than a transient one (failure.AsLock); nil leaves it an
	// unnamed error "op: err" (cloud.ClassifyAs).
	Refuse func(op string, err error) error
}

// Classify names a failure of the S3 call op (cloud.ClassifyAs): nil is
// nil, a transient failure a *failure.RetryableError, any other what
// Refuse makes of it.
func (e Errors) Classify(op string, err error) error {
	return cloud.ClassifyAs(e.Prefix+op, err, e.Refuse)
}

// TooLargeError says an object is larger than a read of it allows.
type TooLargeError struct {
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("object is larger than %d bytes", e.Limit)
}

// Object is an object as Get read it.
type Object struct {
	Body []byte
	ETag string
	// LastModified is when S3 says the object was written (1-second
	// granularity); zero when S3 did not say.
	LastModified time.Time
}

// Write says how Put writes an object.
type Write struct {
	// Op names the write in errors (default "write").
	Op string
	// ContentType of the object (default application/json).
	ContentType string
	// Once writes only if no object is at the key (If-None-Match: *).
	Once bool
	// Tagging, when not empty, is the object's tags (x-amz-tagging).
	Tagging string
}

// Store reads and writes the objects of one bucket for one owner. It is
// safe for concurrent use.
type Store struct {
	client API
	bucket string
	errs   Errors
}

// New returns the store of bucket, whose failures errs names.
func New(client API, bucket string, errs Errors) *Store {
	return &Store{client: client, bucket: bucket, errs: errs}
}

// Classify names a failure of op as the store does (Errors.Classify).
func (s *Store) Classify(op string, err error) error { return s.errs.Classify(op, err) }

// Get reads the object at key, at most limit bytes of it. found is false,
// with no error, only when the object does not exist; any other failure to
// read it is an error (named by the store's Errors), with found false. An
// object larger than limit is such an error, wrapping a *TooLargeError;
// obj then has the object's ETag and LastModified, but no body.
func (s *Store) Get(ctx context.Context, key string, limit int) (obj Object, found bool, err error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		if cloud.IsNotFound(err) {
			return Object{}, false, nil
		}
		return Object{}, false, s.Classify("read "+key, err)
	}
	defer out.Body.Close()
	obj = Object{ETag: aws.ToString(out.ETag), LastModified: aws.ToTime(out.LastModified)}
	body, err := io.ReadAll(io.LimitReader(out.Body, int64(limit)+1))
	if err != nil {
		return Object{}, false, s.Classify("read "+key, err)
	}
	if len(body) > limit {
		return obj, false, s.errs.refuse(s.errs.Prefix+"read "+key, &TooLargeError{Limit: limit})
	}
	obj.Body = body
	return obj, true, nil
}

// GetJSON reads the object at key (Get) and decodes it into v (Decode).
// found is false, with no error, only when the object does not exist. A
// body that does not decode is an error wrapping Decode's, named by the
// store's Errors, with what the caller calls the object (what: "unreadable
// lock").
func (s *Store) GetJSON(ctx context.Context, key string, limit int, what string, v any) (obj Object, found bool, err error) {
	obj, found, err = s.Get(ctx, key, limit)
	if err != nil || !found {
		return obj, found, err
	}
	if err := Decode(obj.Body, v); err != nil {
		return obj, false, s.errs.refuse(s.errs.Prefix+"read "+key, fmt.Errorf("%s: %w", what, err))
	}
	return obj, true, nil
}

// Put writes body at key as w says. With w.Once, wrote is false, with no
// error, when an object is there already (or another conditional write
// to the key is in progress): the caller reads it to learn who won.
func (s *Store) Put(ctx context.Context, key string, body []byte, w Write) (wrote bool, err error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String(w.contentType()),
	}
	if w.Once {
		in.IfNoneMatch = aws.String("*")
	}
	if w.Tagging != "" {
		in.Tagging = aws.String(w.Tagging)
	}
	_, err = s.client.PutObject(ctx, in)
	switch {
	case err == nil:
		return true, nil
	case w.Once && cloud.IsPreconditionFailed(err):
		return false, nil
	}
	return false, s.Classify(w.op()+" "+key, err)
}

// PutJSON writes v as JSON at key (Put). A value that does not encode is
// an error named by the store's Errors.
func (s *Store) PutJSON(ctx context.Context, key string, v any, w Write) (wrote bool, err error) {
	body, err := json.Marshal(v)
	if err != nil {
		return false, s.errs.refuse(s.errs.Prefix+"encode "+key, err)
	}
	return s.Put(ctx, key, body, w)
}

// Deletable is a Store that also deletes objects.
type Deletable struct {
	*Store
	client DeleteAPI
}

// NewDeletable returns the store of bucket, able to delete its objects,
// whose failures errs names.
func NewDeletable(client DeleteAPI, bucket string, errs Errors) *Deletable {
	return &Deletable{Store: New(client, bucket, errs), client: client}
}

// Delete removes the object at key; one that does not exist is not an
// error. With ifMatch (an ETag), S3 deletes it only if it is still that
// object, as one step. deleted is false, with no error, when a condition
// failed (PreconditionFailed, or a conflicting conditional request): the
// caller reads the object again. op names the delete in errors.
func (s *Deletable) Delete(ctx context.Context, op, key, ifMatch string) (deleted bool, err error) {
	in := &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
	if ifMatch != "" {
		in.IfMatch = aws.String(ifMatch)
	}
	_, err = s.client.DeleteObject(ctx, in)
	switch {
	case err == nil, cloud.IsNotFound(err):
		return true, nil
	case cloud.IsPreconditionFailed(err):
		return false, nil
	}
	return false, s.Classify(op+" "+key, err)
}

// Decode decodes body, one JSON value and nothing after it, into v. An
// empty body, or one that is not JSON, is an error.
func Decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("empty object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("not JSON: data after the object")
	}
	return nil
}

func (e Errors) refuse(op string, err error) error {
	if e.Refuse == nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return e.Refuse(op, err)
}

func (w Write) op() string {
	if w.Op == "" {
		return "write"
	}
	return w.Op
}

func (w Write) contentType() string {
	if w.ContentType == "" {
		return "application/json"
	}
	return w.ContentType
}
