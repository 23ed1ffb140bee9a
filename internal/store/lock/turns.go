package lock

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/store/object"
)

// Turns are the turns the steps of retirements and the later rounds of
// deploys take at a target account and region's Auto Scaling calls
// (naming.TurnKey) in one deployer bucket: a calendar each step writes
// its turn into before it calls, so that the steps of many releases
// (each its own execution, none aware of the others' waits) never
// together ask the account's one Auto Scaling bucket for more in a
// second than StepQueue.Calls. It is safe for concurrent use.
type Turns struct{ markers }

// NewTurns returns the turns of bucket.
func NewTurns(client StartsS3, bucket string) *Turns {
	return &Turns{newMarkers(client, bucket)}
}

// StepQueue is how a target's steps share its Auto Scaling calls: the
// turns' calls, each anywhere within the second after its turn begins,
// are bounded over every run of whole seconds as a token bucket of
// Calls refilled at Refill a second bounds them, so that they never
// together ask the account's bucket for more than it holds and
// refills.
type StepQueue struct {
	// Calls is the most calls the turns overlapping any one second may
	// make (the bucket's burst): a turn's calls fall within the second
	// after it begins, so every turn beginning less than a second before
	// the second, or within it, is counted.
	Calls int
	// Refill is what the turns may add for each whole second more: the
	// turns overlapping any w whole seconds in a row (w up to Span) make
	// at most Calls + Refill x (w-1) calls, so that turns in one second
	// after another spend the bucket no faster than it refills.
	Refill int
	// Span is the most whole seconds in a row the turns are counted
	// over (1 at least): their calls over a long time come to Refill +
	// (Calls - Refill) / Span a second at most.
	Span int
	// Share is the most calls a step makes beside another's turn: a
	// step alone around now takes the calls it asks for (the whole of
	// Calls when it asks for none) and makes as many as it needs.
	Share int
	// Horizon is how far ahead a turn is looked for: past it, a step
	// goes without one.
	Horizon time.Duration
}

// around is how far from a turn the turns that share a run of Span
// seconds with it begin, with two seconds' margin: what its
// listings cover.
func (q StepQueue) around() time.Duration {
	return time.Duration(max(q.Span, 1)+2) * time.Second
}

// StepTurn is when a step may make its Auto Scaling calls, and how many.
type StepTurn struct {
	// Wait is how long from now the step waits for its turn, in whole
	// seconds (a state machine's Wait): 0 to go now.
	Wait time.Duration
	// Calls is the most Auto Scaling calls the step may make in its turn:
	// beside others, StepQueue.Share or the fewer it asked for; alone, the
	// calls it asked for (StepQueue.Calls at most), or 0 for as many as
	// it needs when it asked for none.
	Calls int
	// Beside are the other turns it found overlapping now's.
	Beside int
	// Held says a turn is the step's at Wait: it makes its calls then,
	// without taking one again. A step that found none it could keep
	// (others took the seconds it chose at once, maxShareWrites times)
	// holds none: it makes no call, and takes a turn again after Wait.
	Held bool
}

// maxShareWrites bounds the turns of a share a Take writes after it gave
// up its turn alone: each one after the first follows a turn another
// step wrote into the same seconds at the same moment. Past it the step
// holds none (StepTurn.Held).
const maxShareWrites = 5

// Take takes a turn for a step of who (a name unique among the
// executions, naming.ExecutionName's) at account/region's Auto Scaling
// calls, now or a whole number of seconds later, within q.Horizon. It
// first writes a turn at now of the calls the step asks for (q.Calls
// when it asks for none or more) and lists the turns around it:
// with none overlapping now's seconds and room in every run of seconds
// around it (fits), the step goes now. Else it gives that turn
// up and writes one of the calls the step makes at most beside others
// (q.Share, or calls when fewer: 0 for q.Share) at the first second the
// listing leaves room at, lists again, and keeps it only if the turns
// it then sees leave room still; else gives it up and goes on looking.
// Writing before listing, the step that listed last among the turns
// kept in any run saw all the others (S3 lists what was written before
// strongly consistently), so the turns kept never hold more than the
// run's calls (StepQueue). Who's own turns beginning less than
// a second before now or later are not counted: a step taken again (a
// retry, a duplicate invocation) is not beside the turn it took before;
// its turns before that are counted, their calls spent from the same
// bucket.
//
// A turn taken is kept: its calls are made in it. A turn given up is
// deleted. Throttling, a 5xx or a broken connection is a
// *failure.RetryableError; the caller decides what not knowing means.
func (t *Turns) Take(ctx context.Context, account, region, who string, calls int, now time.Time, q StepQueue) (StepTurn, error) {
	share, whole, bound := q.Share, q.Calls, 0
	if calls > 0 {
		share, whole, bound = min(calls, q.Share), min(calls, q.Calls), min(calls, q.Calls)
	}
	prefix := naming.TurnsPrefix(account, region)
	key := func(at time.Time, calls int) string {
		return naming.TurnKey(account, region, naming.StartStamp(at), calls, who)
	}
	alone := key(now, whole)
	if _, err := t.store.Put(ctx, alone, nil, object.Write{Op: "write turn"}); err != nil {
		return StepTurn{}, err
	}
	seen, err := t.list(ctx, prefix, now.Add(-q.around()), now.Add(q.Horizon+q.around()))
	if err != nil {
		return StepTurn{}, err
	}
	others := seen.others(who, now)
	beside := others.touching(now)
	if beside == 0 && others.fits(now, whole, q) {
		return StepTurn{Calls: bound, Held: true}, nil
	}
	if err := t.giveUp(ctx, alone); err != nil {
		return StepTurn{}, err
	}
	k := 0
	for try := range maxShareWrites {
		if k = others.first(now, k, share, q, skip(who, try, beside)); time.Duration(k)*time.Second > q.Horizon {
			break
		}
		at := now.Add(time.Duration(k) * time.Second)
		mine := key(at, share)
		if _, err := t.store.Put(ctx, mine, nil, object.Write{Op: "write turn"}); err != nil {
			return StepTurn{}, err
		}
		from, to := at.Truncate(time.Second).Add(-q.around()), at.Truncate(time.Second).Add(q.around())
		around, err := t.list(ctx, prefix, from, to)
		if err != nil {
			return StepTurn{}, err
		}
		if around.others(who, now).fits(at, share, q) {
			return StepTurn{Wait: time.Duration(k) * time.Second, Calls: share, Beside: beside, Held: true}, nil
		}
		if err := t.giveUp(ctx, mine); err != nil {
			return StepTurn{}, err
		}
		others = others.refresh(around.others(who, now), from, to)
	}
	return StepTurn{Wait: max(min(time.Duration(k)*time.Second, q.Horizon.Truncate(time.Second)), time.Second), Calls: share, Beside: beside}, nil
}

// skip is how many seconds with room a step's try-th turn passes over,
// beside others taking theirs: a number its name and the try choose,
// fewer than beside+1, so that steps taking turns at once spread over
// as many seconds as there are of them rather than all write into the
// first with room, see each other there and give it up together.
func skip(who string, try, beside int) int {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", who, try)
	return int(h.Sum32() % uint32(beside+1))
}

// giveUp deletes a turn written and not kept.
func (t *Turns) giveUp(ctx context.Context, key string) error {
	_, err := t.store.Delete(ctx, "give up turn", key, "")
	return err
}

// turn is a turn listed: when it begins, its calls, its execution, its
// key.
type turn struct {
	at    time.Time
	calls int
	who   string
	key   string
}

type turnList []turn

// list lists the turns under prefix beginning after from, to to.
func (t *Turns) list(ctx context.Context, prefix string, from, to time.Time) (turnList, error) {
	var out turnList
	err := t.each(ctx, "list turns", prefix, prefix+naming.StartStamp(from)+"~", func(key string) bool {
		at, calls, who, ok := naming.TurnOf(prefix, key)
		if !ok {
			return true
		}
		if at.After(to) {
			return false
		}
		out = append(out, turn{at: at, calls: calls, who: who, key: key})
		return true
	})
	return out, err
}

// others is l but for who's own turns beginning less than a second
// before now or later: a step taken again (a retry, a duplicate
// invocation) is not beside the turn it took before, and no execution
// takes two steps at once. Its turns before those were its steps
// before, their calls spent from the same bucket.
func (l turnList) others(who string, now time.Time) turnList {
	since := now.Truncate(time.Second).Add(-time.Second)
	var out turnList
	for _, t := range l {
		if t.who != who || !t.at.After(since) {
			out = append(out, t)
		}
	}
	return out
}

// refresh is l with its turns beginning after from, to to, replaced by
// those of a listing of them (fresh): turns given up since are gone.
func (l turnList) refresh(fresh turnList, from, to time.Time) turnList {
	out := slices.DeleteFunc(slices.Clone(l), func(t turn) bool { return t.at.After(from) && !t.at.After(to) })
	return append(out, fresh...)
}

// touching counts the turns of l whose calls may fall in a whole second
// a turn beginning at at overlaps (the one at is in, and the next).
func (l turnList) touching(at time.Time) int {
	first := at.Truncate(time.Second)
	n := 0
	for _, t := range l {
		if d := t.at.Sub(first); d > -time.Second && d < 2*time.Second {
			n++
		}
	}
	return n
}

// fits says whether a turn of calls beginning at at leaves every run of
// w whole seconds it overlaps (w from 1 to q.Span) with at most q.Calls
// + q.Refill x (w-1) calls of the turns of l overlapping it and its
// own. A turn beginning at a whole second overlaps that one; one
// beginning within a second overlaps it and the next.
func (l turnList) fits(at time.Time, calls int, q StepQueue) bool {
	return l.calendar(at, at, q).fits(at, calls, q)
}

// first is the fewest whole seconds from now, k at least, at which a
// turn of calls fits among l's, passing over the first skip such (past
// q.Horizon when none does).
func (l turnList) first(now time.Time, k, calls int, q StepQueue, skip int) int {
	c := l.calendar(now, now.Add(q.Horizon), q)
	for ; time.Duration(k)*time.Second <= q.Horizon; k++ {
		if !c.fits(now.Add(time.Duration(k)*time.Second), calls, q) {
			continue
		}
		if skip == 0 {
			return k
		}
		skip--
	}
	return k
}

// calendar is the calls of turns by whole second, kept as running sums
// so that any run of seconds' calls is two subtractions: a turn
// beginning at a whole second x counts in the runs holding x; one
// beginning within x counts in those holding x or x+1.
type calendar struct {
	base int64 // the Unix second of index 0
	// whole[i] and within[i] are the calls of the turns beginning before
	// base+i, at a whole second and within one.
	whole, within []int
}

// calendar is l's turns that share a run of q.Span seconds with a turn
// beginning between from and to: from the second a span before from's
// (a turn within it counts in the span's first second) to the last a
// turn at to reaches with a span's run.
func (l turnList) calendar(from, to time.Time, q StepQueue) calendar {
	span := max(q.Span, 1)
	base := from.Unix() - int64(span)
	n := int(to.Unix()-base) + span + 1 // seconds: a run from to's next second holds its last
	c := calendar{base: base, whole: make([]int, n+1), within: make([]int, n+1)}
	for _, t := range l {
		i := t.at.Unix() - base
		if i < 0 || i >= int64(n) {
			continue // it shares no run with a turn from from to to
		}
		if t.at.Equal(t.at.Truncate(time.Second)) {
			c.whole[i+1] += t.calls
		} else {
			c.within[i+1] += t.calls
		}
	}
	for i := 1; i <= n; i++ {
		c.whole[i] += c.whole[i-1]
		c.within[i] += c.within[i-1]
	}
	return c
}

// run is the calls of the turns overlapping the w whole seconds from the
// s-th on (s at least 1: the second before it holds the turns within
// it that reach the s-th).
func (c calendar) run(s, w int) int {
	return c.whole[s+w] - c.whole[s] + c.within[s+w] - c.within[s-1]
}

// fits is turnList.fits for a turn at at, between the calendar's from
// and to.
func (c calendar) fits(at time.Time, calls int, q StepQueue) bool {
	f := int(at.Unix() - c.base)
	last := f // the last second the turn overlaps
	if !at.Equal(at.Truncate(time.Second)) {
		last++
	}
	for w := 1; w <= max(q.Span, 1); w++ {
		limit := q.Calls + q.Refill*(w-1)
		for s := f - w + 1; s <= last; s++ {
			if c.run(s, w)+calls > limit {
				return false
			}
		}
	}
	return true
}
