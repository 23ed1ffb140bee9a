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

// StepQueue is how a target's steps share its Auto Scaling calls.
type StepQueue struct {
	// Calls is the most calls the turns overlapping any one second may
	// make: a turn's calls fall within the second after it begins, so
	// every turn beginning less than a second before the second, or
	// within it, is counted.
	Calls int
	// Share is the most calls a step makes beside another's turn: a
	// step alone around now takes the whole of Calls and makes as many
	// calls as it needs.
	Share int
	// Horizon is how far ahead a turn is looked for: past it, a step
	// goes without one.
	Horizon time.Duration
}

// StepTurn is when a step may make its Auto Scaling calls, and how many.
type StepTurn struct {
	// Wait is how long from now the step waits for its turn, in whole
	// seconds (a state machine's Wait): 0 to go now.
	Wait time.Duration
	// Calls is the most Auto Scaling calls the step may make in its turn
	// (StepQueue.Share, or the fewer it asked for), or 0 for as many as
	// it needs: no other turn overlaps its own.
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
// first writes a turn of all of q.Calls at now and lists the turns
// around it: with none overlapping, the step goes now and makes the
// calls it needs. Else it gives that turn up and writes one of the calls
// the step makes at most beside others (q.Share, or calls when fewer: 0
// for q.Share) at the first second the listing leaves room for, lists again, and
// keeps it only if the turns it then sees overlapping leave room still;
// else gives it up and goes on looking. Writing before listing, of any
// two steps taking turns into the same seconds at once at least one sees
// the other (S3 lists what was written before strongly consistently),
// so the turns kept never overlap any second with more than q.Calls.
// Who's own turns are not counted: a step taken again (a retry, a
// duplicate invocation) is not beside the turn it took before.
//
// A turn taken is kept: its calls are made in it. A turn given up is
// deleted. Throttling, a 5xx or a broken connection is a
// *failure.RetryableError; the caller decides what not knowing means.
func (t *Turns) Take(ctx context.Context, account, region, who string, calls int, now time.Time, q StepQueue) (StepTurn, error) {
	share := q.Share
	if calls > 0 {
		share = min(calls, q.Share)
	}
	prefix := naming.TurnsPrefix(account, region)
	key := func(at time.Time, calls int) string {
		return naming.TurnKey(account, region, naming.StartStamp(at), calls, who)
	}
	whole := key(now, q.Calls)
	if _, err := t.store.Put(ctx, whole, nil, object.Write{Op: "write turn"}); err != nil {
		return StepTurn{}, err
	}
	seen, err := t.list(ctx, prefix, now.Truncate(time.Second).Add(-time.Second), now.Add(q.Horizon+2*time.Second))
	if err != nil {
		return StepTurn{}, err
	}
	others := seen.others(who)
	beside := others.touching(now)
	if beside == 0 {
		return StepTurn{Held: true}, nil
	}
	if err := t.giveUp(ctx, whole); err != nil {
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
		from, to := at.Truncate(time.Second).Add(-time.Second), at.Truncate(time.Second).Add(2*time.Second)
		around, err := t.list(ctx, prefix, from, to)
		if err != nil {
			return StepTurn{}, err
		}
		if around.others(who).fits(at, share, q.Calls) {
			return StepTurn{Wait: time.Duration(k) * time.Second, Calls: share, Beside: beside, Held: true}, nil
		}
		if err := t.giveUp(ctx, mine); err != nil {
			return StepTurn{}, err
		}
		others = others.refresh(around.others(who), from, to)
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

// others is l but for who's own turns: a step taken again (a retry, a
// duplicate invocation) is not beside the turns it took before, and no
// execution takes two steps at once.
func (l turnList) others(who string) turnList {
	var out turnList
	for _, t := range l {
		if t.who != who {
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

// fits says whether a turn of calls beginning at at leaves every
// whole second it overlaps (the one at is in, and the next) with at most
// limit calls of the turns of l and its own.
func (l turnList) fits(at time.Time, calls, limit int) bool {
	first := at.Truncate(time.Second)
	for _, second := range []time.Time{first, first.Add(time.Second)} {
		n := calls
		for _, t := range l {
			if d := t.at.Sub(second); d > -time.Second && d < time.Second {
				n += t.calls
			}
		}
		if n > limit {
			return false
		}
	}
	return true
}

// first is the fewest whole seconds from now, k at least, at which a
// turn of calls fits among l's, passing over the first skip such (past
// q.Horizon when none does).
func (l turnList) first(now time.Time, k, calls int, q StepQueue, skip int) int {
	for ; time.Duration(k)*time.Second <= q.Horizon; k++ {
		if !l.fits(now.Add(time.Duration(k)*time.Second), calls, q.Calls) {
			continue
		}
		if skip == 0 {
			return k
		}
		skip--
	}
	return k
}
