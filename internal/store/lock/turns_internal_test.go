package lock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// at is s seconds after a whole second.
func at(s float64) time.Time {
	return time.Date(2030, 1, 1, 0, 0, 10, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
}

// fitsCase is a turn of calls at at among l's, and whether it fits.
type fitsCase struct {
	name  string
	l     turnList
	at    time.Time
	calls int
	want  bool
}

// checkFits checks each case's turnList.fits under q.
func checkFits(t *testing.T, q StepQueue, cases []fitsCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.l.fits(tt.at, tt.calls, q))
		})
	}
}

// perSecond counts the turns' calls one second at a time: 36 a second.
var perSecond = StepQueue{Calls: 36, Refill: 36, Span: 1}

// A turn's calls fall in the second after it begins: a turn beginning
// at a whole second overlaps that one only; counted in each whole second
// it overlaps, a second's turns may hold limit calls, not more.
func TestTurnListFits(t *testing.T) {
	tests := []fitsCase{
		{"empty", nil, at(0.5), 36, true},
		{"a turn ending where the second begins", turnList{{at: at(0), calls: 20}}, at(1), 20, true},
		{"a turn ending a moment into it", turnList{{at: at(0.001), calls: 20}}, at(1), 20, false},
		{"a turn beginning where the next second ends", turnList{{at: at(2), calls: 20}}, at(0.5), 20, true},
		{"a turn beginning a moment before", turnList{{at: at(1.999), calls: 20}}, at(0.5), 20, false},
		{"exactly the limit", turnList{{at: at(0.2), calls: 16}}, at(0.5), 20, true},
		{"one over", turnList{{at: at(0.2), calls: 17}}, at(0.5), 20, false},
	}
	checkFits(t, perSecond, tests)
}

// Counted over runs of seconds, the turns add a second's refill for
// each second of a run after its first: a turn beginning within a
// second counts in it and the next.
func TestTurnListFitsTheRefill(t *testing.T) {
	q := StepQueue{Calls: 36, Refill: 9, Span: 60}
	inARow := turnList{{at: at(0), calls: 18}, {at: at(1), calls: 18}, {at: at(2), calls: 18}}
	var everyFour turnList // 15 x 36 from -57 to -1: 540, and 36 more at 2 is over 36 + 59 x 9
	for s := -57; s < 0; s += 4 {
		everyFour = append(everyFour, turn{at: at(float64(s)), calls: 36})
	}
	tests := []fitsCase{
		{"a second's refill after a whole turn", turnList{{at: at(0), calls: 36}}, at(1), 9, true},
		{"one more", turnList{{at: at(0), calls: 36}}, at(1), 10, false},
		{"a turn within a second takes the next as well", turnList{{at: at(0.5), calls: 36}}, at(1), 9, false},
		{"a second's refill after those two", turnList{{at: at(0.5), calls: 36}}, at(2), 9, true},
		{"one more after those", turnList{{at: at(0.5), calls: 36}}, at(2), 10, false},
		{"a fourth second in a row", inARow, at(3), 18, false},
		{"a second later", inARow, at(4), 18, true},
		{"within the fourth second", inARow, at(3.5), 9, true},
		{"a turn of 36 every four seconds for a minute", everyFour, at(2), 36, false},
		{"the first of them out of the span", everyFour, at(3), 36, true},
	}
	checkFits(t, q, tests)
}

// The turns touching a turn's seconds are those whose calls may fall in
// the whole second it begins in or the next.
func TestTurnListTouching(t *testing.T) {
	l := turnList{{at: at(-1)}, {at: at(-0.999)}, {at: at(1.999)}, {at: at(2)}}
	assert.Equal(t, 2, l.touching(at(0.5)), "those beginning after the second before began, before the one after the next")
}

// first passes over the seconds without room, and over skip with room,
// up to the horizon, then past it.
func TestTurnListFirst(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 10, 500_000_000, time.UTC)
	q := StepQueue{Calls: 36, Refill: 36, Span: 1, Share: 20, Horizon: 3 * time.Second}
	room := turnList{{at: now.Add(-300 * time.Millisecond), calls: 36}, {at: now.Add(1200 * time.Millisecond), calls: 36}}
	full := append(room, turn{at: now.Add(3200 * time.Millisecond), calls: 36})
	assert.Equal(t, 0, turnList(nil).first(now, 0, 20, q, 0))
	assert.Equal(t, 2, turnList(nil).first(now, 0, 20, q, 2), "passing over two with room")
	assert.Equal(t, 4, full.first(now, 0, 20, q, 0), "none within the horizon: past it")
	assert.Equal(t, 3, room.first(now, 0, 20, q, 0), "room at the horizon itself")
}

// refresh replaces the turns of its window by a fresh listing's.
func TestTurnListRefresh(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 10, 0, time.UTC)
	a, b, c, b2 := turn{at: base, key: "a"}, turn{at: base.Add(5 * time.Second), key: "b"}, turn{at: base.Add(10 * time.Second), key: "c"}, turn{at: base.Add(5 * time.Second), key: "b2"}
	got := turnList{a, b, c}.refresh(turnList{b2}, base.Add(3*time.Second), base.Add(7*time.Second))
	assert.ElementsMatch(t, turnList{a, c, b2}, got)
}

// The calendar of a turn holds every turn that shares a run of Span
// seconds with it, up to the edges: a turn within the second a span
// before counts in the run that begins a second later; a turn at the
// last second a run from the turn's next second reaches counts; turns
// past either edge are left out.
func TestCalendarEdges(t *testing.T) {
	q := StepQueue{Calls: 36, Refill: 9, Span: 2}
	tests := []fitsCase{
		{"within the second a span before", turnList{{at: at(-1.5), calls: 36}}, at(0), 20, false},
		{"at the last second a run reaches", turnList{{at: at(1), calls: 10}, {at: at(2), calls: 20}}, at(0.5), 20, false},
		{"past the edges", turnList{{at: at(-100), calls: 36}, {at: at(-2), calls: 36}, {at: at(3), calls: 36}, {at: at(100), calls: 36}}, at(0.5), 36, true},
	}
	checkFits(t, q, tests)
}
