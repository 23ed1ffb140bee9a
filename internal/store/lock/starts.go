package lock

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/object"
)

// StartsS3 is the S3 API Starts calls.
type StartsS3 interface {
	object.DeleteAPI
	ListObjectsV2(ctx context.Context, params *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
}

var _ StartsS3 = (*s3.Client)(nil)

// Starts are the start markers of the deploys to each target account and
// region (naming.StartKey) in one deployer bucket: the queue the deploys
// starting at once take turns by, so that together they do not ask the
// account's request buckets for more than they hold. It is safe for
// concurrent use.
type Starts struct{ markers }

// NewStarts returns the start markers of bucket.
func NewStarts(client StartsS3, bucket string) *Starts {
	return &Starts{newMarkers(client, bucket)}
}

// markers are empty objects of a target under one prefix of the deployer
// bucket, whose keys say all there is to know (start markers, turns).
type markers struct {
	client StartsS3
	store  *object.Deletable
	bucket string
}

func newMarkers(client StartsS3, bucket string) markers {
	return markers{client: client, store: object.NewDeletable(client, bucket, object.Errors{Refuse: failure.AsLock}), bucket: bucket}
}

// each calls fn with every key under prefix after after, in order, until
// fn returns false. A listing that fails is an error named op.
func (m markers) each(ctx context.Context, op, prefix, after string, fn func(key string) bool) error {
	p := s3.NewListObjectsV2Paginator(m.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(m.bucket), Prefix: aws.String(prefix), StartAfter: aws.String(after),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return m.store.Classify(op, err)
		}
		for _, o := range page.Contents {
			if !fn(aws.ToString(o.Key)) {
				return nil
			}
		}
	}
	return nil
}

// Turn is when a deploy may start.
type Turn struct {
	// Wait is how long from now the deploy waits for its turn: 0 for a
	// deploy that finds none ahead of it.
	Wait time.Duration
	// Ahead are the deploys to the same target it found ahead of it.
	Ahead int
}

// Queue is how a target's starts are spaced.
type Queue struct {
	// Every is the time between two starts: the account's request rate
	// over the calls one start makes.
	Every time.Duration
	// Horizon is how far back the starts ahead are looked for; a queue
	// longer than that is not seen whole.
	Horizon time.Duration
}

// Take writes the start marker of deploy (a name unique among the
// deploys to every target, naming.ExecutionName's) to account/region,
// its execution started at, then lists the target's markers from
// q.Horizon before at: the deploys that started no later than at are
// ahead of it, each start after the one before by q.Every at least, and
// its turn comes after theirs (and never before at). Writing before
// listing, of any two deploys starting together at least one sees the
// other (S3 lists what was written before strongly consistently):
// they never both go first. A lone deploy waits 0.
//
// Idempotent: the marker of a start is one key (a retry writes it again
// and does not count itself). Throttling, a 5xx or a broken connection is
// a *failure.RetryableError; the marker is written before anything is
// read.
func (s *Starts) Take(ctx context.Context, account, region, deploy string, at, now time.Time, q Queue) (Turn, error) {
	prefix := naming.StartsPrefix(account, region)
	mine := naming.StartKey(account, region, naming.StartStamp(at), deploy)
	if _, err := s.store.Put(ctx, mine, nil, object.Write{Op: "write start marker"}); err != nil {
		return Turn{}, err
	}
	ahead, err := s.ahead(ctx, prefix, mine, at, q.Horizon)
	if err != nil {
		return Turn{}, err
	}
	if len(ahead) == 0 {
		return Turn{}, nil
	}
	turn := ahead[0]
	for _, t := range ahead[1:] {
		turn = later(t, turn.Add(q.Every))
	}
	turn = later(at, turn.Add(q.Every))
	return Turn{Wait: max(turn.Sub(now), 0), Ahead: len(ahead)}, nil
}

// ahead lists the starts under prefix from horizon before at to at,
// other than mine, in order (keys sort by start).
func (s *Starts) ahead(ctx context.Context, prefix, mine string, at time.Time, horizon time.Duration) ([]time.Time, error) {
	var out []time.Time
	err := s.each(ctx, "list start markers", prefix, prefix+naming.StartStamp(at.Add(-horizon)), func(key string) bool {
		t, _, ok := naming.StartOf(prefix, key)
		if !ok || key == mine {
			return true
		}
		if t.After(at) {
			return false
		}
		out = append(out, t)
		return true
	})
	return out, err
}

// Arrive clears the start marker Take wrote for deploy (its execution
// started at) to account/region: the deploy is no longer on its way
// (Underway), its new fleet healthy or its deploy failed. Idempotent: a
// marker already gone is cleared. A marker Arrive could not clear counts
// as on its way only until its stamp is older than Underway's horizon,
// and expires with the bucket's lifecycle rule. Throttling, a 5xx or a
// broken connection is a *failure.RetryableError.
func (s *Starts) Arrive(ctx context.Context, account, region, deploy string, at time.Time) error {
	_, err := s.store.Delete(ctx, "clear start marker", naming.StartKey(account, region, naming.StartStamp(at), deploy), "")
	return err
}

// Underway counts the deploys to account/region on their way to a
// healthy fleet at now: the start markers stamped from horizon before now
// (an older one is a deploy that can no longer be, or whose marker was
// lost), other than deploy's own, that Arrive has not cleared. One LIST
// for up to a thousand markers. A failed listing is an error, never a
// count: the caller decides what not knowing means.
func (s *Starts) Underway(ctx context.Context, account, region, deploy string, now time.Time, horizon time.Duration) (int, error) {
	prefix := naming.StartsPrefix(account, region)
	n := 0
	err := s.each(ctx, "list start markers", prefix, prefix+naming.StartStamp(now.Add(-horizon)), func(key string) bool {
		if _, id, ok := naming.StartOf(prefix, key); ok && id != deploy {
			n++
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
