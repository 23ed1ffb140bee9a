package querylist

import (
	"bytes"
	"strconv"
)

// A reader walks an answer's bytes a token at a time. It reads the
// canonical form of AWS's query-protocol XML: elements with names of
// ASCII letters, digits, '_', '-' and '.', character data, and an XML
// declaration at the start. Anything else (a namespace prefix, a
// comment, CDATA, a processing instruction, a name it does not read)
// stops it: its methods answer false, and the caller hands the whole
// answer to the SDK.
//
// A strict reader, which reads what the fast path decodes and removes
// from the answer, also refuses an attribute, and character data that
// is not printable ASCII, tab or line feed once its entity references
// are resolved: encoding/xml rejects or rewrites such data (a carriage
// return becomes a line feed), and the fast path is exact only where
// both decode the same bytes to the same strings.
type reader struct {
	b []byte
	// s is b as a string: a value read as it stands is a piece of it,
	// which costs no copy.
	s      string
	i      int
	strict bool
	// strs is where the strings read are kept for the pointers the
	// SDK's types hold, a block at a time.
	strs []string
}

func newReader(b []byte) *reader { return &reader{b: b, s: string(b)} }

// ptr is a pointer to a string holding s.
func (r *reader) ptr(s string) *string {
	if len(r.strs) == cap(r.strs) {
		r.strs = make([]string, 0, 512)
	}
	r.strs = append(r.strs, s)
	return &r.strs[len(r.strs)-1]
}

// kind is what a token is.
type kind uint8

const (
	text  kind = iota // character data
	start             // <name ...> or <name .../>
	end               // </name>
)

// token is one token of an answer: its kind, the element's name (start,
// end), whether a start tag closes itself (<name/>), and for character
// data its bytes as they are in the answer. from is where it begins.
type token struct {
	kind  kind
	name  []byte
	empty bool
	raw   []byte
	from  int
}

// next is the token at the reader's position, and whether it is one the
// reader reads; at the end of the bytes, false.
func (r *reader) next() (token, bool) {
	if r.i >= len(r.b) {
		return token{}, false
	}
	from := r.i
	if r.b[r.i] != '<' {
		n := bytes.IndexByte(r.b[r.i:], '<')
		if n < 0 {
			n = len(r.b) - r.i
		}
		r.i += n
		return token{kind: text, raw: r.b[from:r.i], from: from}, true
	}
	r.i++
	if r.i < len(r.b) && r.b[r.i] == '/' {
		r.i++
		name, ok := r.name()
		if !ok {
			return token{}, false
		}
		r.space()
		if !r.byte('>') {
			return token{}, false
		}
		return token{kind: end, name: name, from: from}, true
	}
	name, ok := r.name()
	if !ok {
		return token{}, false
	}
	t := token{kind: start, name: name, from: from}
	for {
		spaced := r.space()
		switch {
		case r.byte('>'):
			return t, true
		case r.byte('/'):
			t.empty = true
			return t, r.byte('>')
		case !spaced || r.strict || !r.attribute():
			return token{}, false
		}
	}
}

// name reads an element or attribute name.
func (r *reader) name() ([]byte, bool) {
	from := r.i
	for r.i < len(r.b) && nameByte(r.b[r.i], r.i == from) {
		r.i++
	}
	return r.b[from:r.i], r.i > from
}

// nameByte says whether c is a byte of a name the reader reads, first
// saying whether it would be the name's first.
func nameByte(c byte, first bool) bool {
	return nameBytes[c] == nameStart || nameBytes[c] == nameRest && !first
}

// nameBytes classes each byte for names: nameStart may begin one,
// nameRest only follow.
var nameBytes = func() (t [256]uint8) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
			t[c] = nameStart
		case '0' <= c && c <= '9', c == '-', c == '.':
			t[c] = nameRest
		}
	}
	return t
}()

const (
	nameStart = 1 + iota
	nameRest
)

// attribute reads name="value" or name='value'.
func (r *reader) attribute() bool {
	if _, ok := r.name(); !ok {
		return false
	}
	r.space()
	if !r.byte('=') {
		return false
	}
	r.space()
	if r.i >= len(r.b) || r.b[r.i] != '"' && r.b[r.i] != '\'' {
		return false
	}
	q := r.b[r.i]
	n := bytes.IndexByte(r.b[r.i+1:], q)
	if n < 0 {
		return false
	}
	r.i += n + 2
	return true
}

// space skips XML white space, saying whether there was any.
func (r *reader) space() bool {
	from := r.i
	for r.i < len(r.b) && isSpace(r.b[r.i]) {
		r.i++
	}
	return r.i > from
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// byte reads c if it is next.
func (r *reader) byte(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// prolog reads what may come before the root element: white space, and
// at the very start an XML declaration of version 1.0 in UTF-8.
func (r *reader) prolog() bool {
	for _, decl := range declarations {
		if bytes.HasPrefix(r.b, decl) {
			r.i = len(decl)
			break
		}
	}
	r.space()
	return r.i < len(r.b) && r.b[r.i] == '<' && !bytes.HasPrefix(r.b[r.i:], []byte("<?")) && !bytes.HasPrefix(r.b[r.i:], []byte("<!"))
}

// declarations are the XML declarations prolog reads.
var declarations = [][]byte{
	[]byte(`<?xml version="1.0" encoding="UTF-8"?>`),
	[]byte(`<?xml version="1.0"?>`),
}

// skip reads on to the end of the element t starts (nothing for one
// that closes itself), its tags matched.
func (r *reader) skip(t token) bool {
	if t.empty {
		return true
	}
	open := [][]byte{t.name}
	for len(open) > 0 {
		u, ok := r.next()
		if !ok {
			return false
		}
		switch u.kind {
		case text:
			if r.strict {
				if _, ok := chars(u.raw); !ok {
					return false
				}
			}
		case start:
			if !u.empty {
				open = append(open, u.name)
			}
		case end:
			if !bytes.Equal(u.name, open[len(open)-1]) {
				return false
			}
			open = open[:len(open)-1]
		}
	}
	return true
}

// child is the next start tag among the children of the element named
// parent, skipping character data between them; false, with done, at
// parent's end tag.
func (r *reader) child(parent []byte) (t token, done, ok bool) {
	for {
		t, ok := r.next()
		switch {
		case !ok:
			return token{}, false, false
		case t.kind == start:
			return t, false, true
		case t.kind == end:
			return token{}, true, bytes.Equal(t.name, parent)
		case r.strict:
			if _, ok := chars(t.raw); !ok {
				return token{}, false, false
			}
		}
	}
}

// value is the text of the element t starts, which holds character
// data alone: "" for none (<name/> or <name></name>), as the SDK's
// NodeDecoder.Value reads it.
func (r *reader) value(t token) (string, bool) {
	if t.empty {
		return "", true
	}
	u, ok := r.next()
	if !ok {
		return "", false
	}
	if u.kind == end {
		return "", bytes.Equal(u.name, t.name)
	}
	if u.kind != text {
		return "", false
	}
	s, ok := r.chars(u)
	if !ok {
		return "", false
	}
	e, ok := r.next()
	return s, ok && e.kind == end && bytes.Equal(e.name, t.name)
}

// chars is the character data of the text token u (see chars): a piece
// of r.s when it has no entity reference.
func (r *reader) chars(u token) (string, bool) {
	if bytes.IndexByte(u.raw, '&') < 0 {
		for _, c := range u.raw {
			if !plainChar(c) {
				return "", false
			}
		}
		return r.s[u.from : u.from+len(u.raw)], true
	}
	return chars(u.raw)
}

// chars is the character data raw stands for, its entity references
// resolved, when every character is printable ASCII, tab or line feed.
func chars(raw []byte) (string, bool) {
	plain := true
	for _, c := range raw {
		if c == '&' {
			plain = false
		} else if !plainChar(c) {
			return "", false
		}
	}
	if plain {
		return string(raw), true
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '&' {
			out = append(out, raw[i])
			continue
		}
		n := bytes.IndexByte(raw[i:], ';')
		if n < 0 {
			return "", false
		}
		c, ok := entity(raw[i+1 : i+n])
		if !ok {
			return "", false
		}
		out = append(out, c)
		i += n
	}
	return string(out), true
}

// plainChar says whether c stands for itself in character data the
// fast path reads.
func plainChar(c byte) bool { return plainChars[c] }

var plainChars = func() (t [256]bool) {
	for c := range t {
		t[c] = ' ' <= c && c <= '~' || c == '\t' || c == '\n'
	}
	return t
}()

// entity is the character the reference &ref; stands for: one of XML's
// five named entities, or a character reference to a plain character.
func entity(ref []byte) (byte, bool) {
	if c, ok := namedEntities[string(ref)]; ok {
		return c, true
	}
	return charRef(ref)
}

// namedEntities are XML's predefined entities.
var namedEntities = map[string]byte{"lt": '<', "gt": '>', "amp": '&', "quot": '"', "apos": '\''}

// charRef is the character a character reference (#65, #x41) stands
// for, when it is a plain character.
func charRef(ref []byte) (byte, bool) {
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	digits, base := ref[1:], 10
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 || len(digits) > 6 || digits[0] == '+' || digits[0] == '-' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || n > '~' || !plainChar(byte(n)) {
		return 0, false
	}
	return byte(n), true
}
