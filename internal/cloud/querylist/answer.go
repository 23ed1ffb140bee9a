package querylist

import (
	"strings"
)

// answer says where an operation's long lists are in its answer: below
// the result element (result), on the way down the elements that own
// them (owner: the path to each group of DescribeAutoScalingGroups,
// whose instances and tags are lists; none when the lists are the
// result's own), and the lists, each a child of an owner by name. Names
// match as the SDK matches them: regardless of case. count is how many
// owners the SDK decoded from the rest of the answer (0 without owners),
// and false when its result is not the operation's output.
type answer struct {
	result string
	owner  []string
	lists  []lister
	count  func(result any) (owners int, ok bool)
}

// lister is one list of an answer: its element's name, and a new
// listing for one answer's occurrences of it.
type lister interface {
	name() string
	listing() listing
}

// listing is what one answer's occurrences of a list decoded to.
type listing interface {
	// decode reads the list element t starts, of owner.
	decode(r *reader, t token, owner int) bool
	// graft puts the members decoded into result, the SDK's decoding of
	// the rest of the answer.
	graft(result any)
}

// cut reads the answer body, decoding each occurrence of its lists:
// stripped is body without them, got what they decoded to (one listing
// a list), owners how many owners the answer has. ok is false when body
// is not in the form the reader reads, or ends before the result's end:
// the caller decodes body with the SDK alone.
func (a answer) cut(body []byte) (stripped []byte, got []listing, owners int, ok bool) {
	w := walk{answer: a, r: newReader(body)}
	for _, l := range a.lists {
		w.got = append(w.got, l.listing())
	}
	if !w.r.prolog() {
		return nil, nil, 0, false
	}
	root, ok := w.r.next()
	if !ok || root.kind != start || root.empty {
		return nil, nil, 0, false
	}
	for {
		t, done, ok := w.r.child(root.name)
		if done || !ok {
			return nil, nil, 0, false // no result: the SDK says so
		}
		if !strings.EqualFold(string(t.name), a.result) {
			if !w.r.skip(t) {
				return nil, nil, 0, false
			}
			continue
		}
		if !t.empty && !w.children(t.name, 0) {
			return nil, nil, 0, false
		}
		break
	}
	if len(w.cuts) == 0 {
		return body, w.got, w.owners, true
	}
	stripped = make([]byte, 0, len(body)-w.removed)
	last := 0
	for _, c := range w.cuts {
		stripped = append(stripped, body[last:c[0]]...)
		last = c[1]
	}
	return append(stripped, body[last:]...), w.got, w.owners, true
}

// walk is one cut in progress: the listings, the owners counted, and
// the byte spans removed.
type walk struct {
	answer
	r       *reader
	got     []listing
	owners  int
	cuts    [][2]int
	removed int
}

// children reads the children of the element named parent, at depth
// level of the path to the owners below the result.
func (w *walk) children(parent []byte, level int) bool {
	for {
		t, done, ok := w.r.child(parent)
		if done || !ok {
			return ok
		}
		switch {
		case level == len(w.owner):
			if !w.cutList(t) {
				return false
			}
		case !strings.EqualFold(string(t.name), w.owner[level]):
			if !w.r.skip(t) {
				return false
			}
		default:
			if !t.empty && !w.children(t.name, level+1) {
				return false
			}
			if level == len(w.owner)-1 {
				w.owners++
			}
		}
	}
}

// cutList decodes the child t of an owner when it is one of the lists,
// strictly, and marks its bytes to be cut; it skips any other child.
func (w *walk) cutList(t token) bool {
	for i, l := range w.lists {
		if strings.EqualFold(string(t.name), l.name()) {
			w.r.strict = true
			ok := w.got[i].decode(w.r, t, w.owners)
			w.r.strict = false
			w.cuts = append(w.cuts, [2]int{t.from, w.r.i})
			w.removed += w.r.i - t.from
			return ok
		}
	}
	return w.r.skip(t)
}

// list is a list of members of type T, put into the SDK's result by set
// (an owner's list, or the result's own with owner 0).
type list[T any] struct {
	elem   string
	member fields[T]
	set    func(result any, owner int, members []T)
}

func (l list[T]) name() string { return l.elem }

func (l list[T]) listing() listing { return &listed[T]{list: l, got: map[int][]T{}} }

// listed is a list's members, by owner; an owner with an occurrence of
// the list has a non-nil slice, as the SDK decodes one.
type listed[T any] struct {
	list[T]
	got map[int][]T
}

func (l *listed[T]) decode(r *reader, t token, owner int) bool {
	got := l.got[owner]
	if got == nil {
		got = []T{}
	}
	if !t.empty {
		for {
			m, done, ok := r.child(t.name)
			if !ok {
				return false
			}
			if done {
				break
			}
			if !strings.EqualFold(string(m.name), "member") {
				if !r.skip(m) {
					return false
				}
				continue
			}
			var v T
			if !m.empty && !l.member.decode(r, &v, m.name) {
				return false
			}
			got = append(got, v)
		}
	}
	l.got[owner] = got
	return true
}

func (l *listed[T]) graft(result any) {
	for owner, members := range l.got {
		l.set(result, owner, members)
	}
}

// fields are what an element's children decode into a T, by name.
type fields[T any] []field[T]

// field is one child element: a simple value (value: false when the
// text is not one the fast path decodes exactly), or an object (node,
// given the reader after its start tag t).
type field[T any] struct {
	name  string
	value func(r *reader, v *T, s string) bool
	node  func(r *reader, v *T, t token) bool
}

// decode reads the children of the element named parent into v, to its
// end tag. A child it has no field for is skipped, as the SDK skips it.
func (fs fields[T]) decode(r *reader, v *T, parent []byte) bool {
	for {
		t, done, ok := r.child(parent)
		if done || !ok {
			return ok
		}
		f := fs.find(t.name)
		switch {
		case f == nil:
			if !r.skip(t) {
				return false
			}
		case f.node != nil:
			if !f.node(r, v, t) {
				return false
			}
		default:
			s, ok := r.value(t)
			if !ok || !f.value(r, v, s) {
				return false
			}
		}
	}
}

// find is the field named name, regardless of case; nil for none.
func (fs fields[T]) find(name []byte) *field[T] {
	for i := range fs {
		if string(name) == fs[i].name {
			return &fs[i]
		}
	}
	for i := range fs {
		if strings.EqualFold(string(name), fs[i].name) {
			return &fs[i]
		}
	}
	return nil
}

// str is a string field, set through at.
func str[T any](name string, at func(*T) **string) field[T] {
	return field[T]{name: name, value: func(r *reader, v *T, s string) bool { *at(v) = r.ptr(s); return true }}
}

// enum is a field of a string enum type E, set through at.
func enum[T any, E ~string](name string, at func(*T) *E) field[T] {
	return field[T]{name: name, value: func(_ *reader, v *T, s string) bool { *at(v) = E(s); return true }}
}

// parsed is a field of type V, set through at, parsed from its text by
// parse: false when the fast path does not decode the text exactly as
// the SDK would.
func parsed[T, V any](name string, at func(*T) **V, parse func(string) (V, bool)) field[T] {
	return field[T]{name: name, value: func(_ *reader, v *T, s string) bool {
		x, ok := parse(s)
		*at(v) = &x
		return ok
	}}
}

// object is a field holding an object of fields fs, set through at: a
// second occurrence decodes into the first's object, as the SDK's does.
func object[T, U any](name string, at func(*T) **U, fs fields[U]) field[T] {
	return field[T]{name: name, node: func(r *reader, v *T, t token) bool {
		u := at(v)
		if *u == nil {
			*u = new(U)
		}
		return t.empty || fs.decode(r, *u, t.name)
	}}
}
