package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release/spelling"
	"github.com/ferryhq/ferry/internal/release/textpos"
)

// DecodeFile decodes a release file: a release as a person writes it. It is
// strict: an unknown key, a duplicate key, a value of the wrong type, a
// nesting deeper than limits.MaxJSONDepth, a file larger than
// limits.MaxReleaseBytes or a field only the client may set (release_id,
// created_at, created_by, identity, rollback_of, heal_of, promotion_of, destroy,
// assets.*.sha256, assets.*.size) is a problem naming its JSON path. Malformed JSON is
// reported with its line and column. The error is a *failure.BadReleaseError listing every problem
// found. DecodeFile does not apply defaults and does not validate values.
func DecodeFile(data []byte) (*Release, error) { return decode(data, true) }

// Decode decodes a release as the client uploaded it: like DecodeFile, but
// the fields the client sets are allowed (Validate with uploaded=true then
// requires them).
func Decode(data []byte) (*Release, error) { return decode(data, false) }

// clientSet lists, per struct type, the JSON fields that only the client
// may set; a release file must leave them out.
var clientSet = map[reflect.Type]map[string]bool{
	reflect.TypeFor[Release](): {"release_id": true, "created_at": true, "created_by": true, "identity": true, "rollback_of": true, "heal_of": true, "promotion_of": true, "destroy": true},
	reflect.TypeFor[Asset]():   {"sha256": true, "size": true},
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	releaseType = reflect.TypeFor[Release]()
	stepType    = reflect.TypeFor[Step]()
)

// errStop ends decoding at the first syntax error or excessive nesting;
// the problem is already recorded.
var errStop = errors.New("stop")

type decoder struct {
	data  []byte
	dec   *json.Decoder
	file  bool
	probs *problems
}

func decode(data []byte, file bool) (*Release, error) {
	var r Release
	if p := decodeInto(data, file, &r, "", "release", limits.MaxReleaseBytes); p.err() != nil {
		return nil, p.err()
	}
	return &r, nil
}

// DecodeDocument decodes data, a JSON document a person writes for ferry
// other than a release (a pipeline file), into v, a pointer to a struct,
// as strictly as DecodeFile decodes a release file: an unknown key (with
// the nearest known one suggested), a duplicate key, a value of the wrong
// type, null where a value is required, a nesting deeper than
// limits.MaxJSONDepth or more than maxBytes bytes is a problem naming its
// JSON path; malformed JSON is reported with its line and column. what
// names the document in messages ("pipeline"), and is the path of a
// problem about the whole document. It returns every problem found, each
// "path: message", sorted; none when v was decoded. It applies no
// defaults and validates no values.
func DecodeDocument(data []byte, v any, what string, maxBytes int) []string {
	p := decodeInto(data, true, v, what, what, maxBytes)
	if len(p.list) == 0 {
		return nil
	}
	return p.sorted()
}

// decodeInto walks data against the type v points to, recording every
// problem, then decodes it into v when there is none. root is the path of
// a problem about the whole document, what its name in messages.
func decodeInto(data []byte, file bool, v any, root, what string, maxBytes int) *problems {
	p := &problems{root: root}
	if len(data) > maxBytes {
		p.add("", "%d bytes, more than the limit of %d", len(data), maxBytes)
		return p
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.list = append(p.list, "line 1, column 1: starts with a byte order mark; save the file as UTF-8 without one")
		return p
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		p.list = append(p.list, position(data, int64(off))+": invalid UTF-8")
		return p
	}
	d := &decoder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), file: file, probs: p}
	d.dec.UseNumber()
	tok, err := d.dec.Token()
	if err == nil {
		err = d.value(reflect.TypeOf(v).Elem(), "", 1, tok, false)
	} else {
		err = d.syntax(err)
	}
	if err == nil {
		off := d.dec.InputOffset()
		if _, terr := d.dec.Token(); terr != io.EOF {
			for off < int64(len(data)) && isSpace(data[off]) {
				off++
			}
			p.list = append(p.list, position(data, off)+": unexpected data after the "+what)
			err = errStop
		}
	}
	if errors.Is(err, errStop) {
		// A syntax error or a too deep nesting makes everything after it
		// meaningless: report only that.
		p.list = p.list[len(p.list)-1:]
		return p
	}
	if len(p.list) > 0 {
		return p
	}
	if err := json.Unmarshal(data, v); err != nil {
		// The walk above accepts only what Unmarshal accepts; this is a
		// safety net, not a path users should see.
		p.add("", "%s", err.Error())
	}
	return p
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// position returns "line L, column C" of byte offset off of data.
func position(data []byte, off int64) string { return textpos.At(data, off).String() }

// syntax records a malformed-JSON error with its position and returns
// errStop.
func (d *decoder) syntax(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		d.probs.list = append(d.probs.list, position(d.data, se.Offset)+": "+strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		d.probs.list = append(d.probs.list, position(d.data, int64(len(d.data)))+": unexpected end of JSON input")
	default:
		d.probs.list = append(d.probs.list, position(d.data, d.dec.InputOffset())+": "+err.Error())
	}
	return errStop
}

// next reads the next token.
func (d *decoder) next() (json.Token, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(err)
	}
	return tok, nil
}

// value checks the JSON value starting with tok against Go type t,
// recording every problem at path. inMap says the value is an element of
// a map, where null is refused.
func (d *decoder) value(t reflect.Type, path string, depth int, tok json.Token, inMap bool) error {
	if tok == nil {
		d.null(t, path, inMap)
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := tok.(json.Delim); ok && depth > limits.MaxJSONDepth {
		d.probs.add(path, "nested too deeply (at most %d levels)", limits.MaxJSONDepth)
		return errStop
	}
	switch {
	case t == timeType:
		return d.timestamp(t, path, depth, tok)
	case t == stepType:
		return d.step(path, depth, tok)
	case t.Kind() == reflect.Struct:
		return d.object(path, depth, tok, t, func(key, kpath string, vtok json.Token) error {
			return d.field(t, key, kpath, depth, vtok)
		})
	case t.Kind() == reflect.Map:
		return d.object(path, depth, tok, t, func(key, kpath string, vtok json.Token) error {
			return d.value(t.Elem(), kpath, depth+1, vtok, true)
		})
	case t.Kind() == reflect.Slice:
		return d.array(t, path, depth, tok)
	}
	if check, ok := scalars[t.Kind()]; ok {
		if !check(d, t, path, tok) {
			return d.mismatch(t, path, depth, tok)
		}
		return nil
	}
	d.probs.add(path, "cannot be decoded")
	return d.skip(path, depth, tok)
}

// null records a problem unless t may be null: slices and maps may, and
// pointers (optional fields) may unless they are the elements of a map.
func (d *decoder) null(t reflect.Type, path string, inMap bool) {
	switch {
	case t.Kind() == reflect.Slice, t.Kind() == reflect.Map, t.Kind() == reflect.Pointer && !inMap:
		return
	}
	d.probs.add(path, "must be %s, not null", describeType(t))
}

// timestamp checks an RFC 3339 time.
func (d *decoder) timestamp(t reflect.Type, path string, depth int, tok json.Token) error {
	s, ok := tok.(string)
	if !ok {
		return d.mismatch(t, path, depth, tok)
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		d.probs.add(path, "must be %s", describeType(t))
	}
	return nil
}

// step checks a rollout step: a whole number or a string "N%" (their
// ranges are Validate's).
func (d *decoder) step(path string, depth int, tok json.Token) error {
	switch v := tok.(type) {
	case json.Number:
		if _, err := strconv.Atoi(string(v)); err != nil {
			d.probs.add(path, "must be %s, not %s", stepShape, string(v))
		}
		return nil
	case string:
		if !stepPercentRe.MatchString(v) {
			d.probs.add(path, "must be %s, not %q", stepShape, v)
		}
		return nil
	}
	return d.mismatch(stepType, path, depth, tok)
}

// field checks the member key of a struct t: an unknown field, or one
// only the client may set in a release file, is a problem and is skipped.
func (d *decoder) field(t reflect.Type, key, kpath string, depth int, vtok json.Token) error {
	ft, ok := structFields(t)[key]
	if !ok {
		d.probs.add(kpath, "unknown field%s", suggest(key, t))
		return d.skip(kpath, depth+1, vtok)
	}
	if d.file && clientSet[t][key] {
		d.probs.add(kpath, "set by the client; a release file must not set it")
		return d.skip(kpath, depth+1, vtok)
	}
	return d.value(ft, kpath, depth+1, vtok, false)
}

// array checks every element of the array starting with tok.
func (d *decoder) array(t reflect.Type, path string, depth int, tok json.Token) error {
	if tok != json.Delim('[') {
		return d.mismatch(t, path, depth, tok)
	}
	for i := 0; d.dec.More(); i++ {
		vtok, err := d.next()
		if err != nil {
			return err
		}
		if err := d.value(t.Elem(), index(path, i), depth+1, vtok, false); err != nil {
			return err
		}
	}
	_, err := d.next()
	return err
}

// scalars check a scalar token against a kind of Go value: false means the
// token is of another JSON type (a mismatch); a token of the right type
// whose value does not fit is recorded as a problem at path.
var scalars = map[reflect.Kind]func(d *decoder, t reflect.Type, path string, tok json.Token) bool{
	reflect.String: func(_ *decoder, _ reflect.Type, _ string, tok json.Token) bool {
		_, ok := tok.(string)
		return ok
	},
	reflect.Bool: func(_ *decoder, _ reflect.Type, _ string, tok json.Token) bool {
		_, ok := tok.(bool)
		return ok
	},
	reflect.Int:     (*decoder).integer,
	reflect.Int64:   (*decoder).integer,
	reflect.Int32:   (*decoder).integer,
	reflect.Float64: (*decoder).float,
}

// integer checks a number token against an integer type of t's size.
func (d *decoder) integer(t reflect.Type, path string, tok json.Token) bool {
	n, ok := tok.(json.Number)
	if !ok {
		return false
	}
	if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
		if errors.Is(err, strconv.ErrRange) {
			d.probs.add(path, "integer out of range")
		} else {
			d.probs.add(path, "must be an integer, not %s", string(n))
		}
	}
	return true
}

// float checks a number token against float64.
func (d *decoder) float(_ reflect.Type, path string, tok json.Token) bool {
	n, ok := tok.(json.Number)
	if !ok {
		return false
	}
	if _, err := strconv.ParseFloat(string(n), 64); err != nil {
		d.probs.add(path, "number out of range")
	}
	return true
}

// object walks the members of the object starting with tok, calling member
// for each key after refusing duplicates.
func (d *decoder) object(path string, depth int, tok json.Token, t reflect.Type, member func(key, kpath string, vtok json.Token) error) error {
	if tok != json.Delim('{') {
		return d.mismatch(t, path, depth, tok)
	}
	seen := map[string]bool{}
	for d.dec.More() {
		ktok, err := d.next()
		if err != nil {
			return err
		}
		key, _ := ktok.(string) // the decoder guarantees a string key
		kpath := field(path, key)
		vtok, err := d.next()
		if err != nil {
			return err
		}
		if seen[key] {
			d.probs.add(kpath, "duplicate key")
			if err := d.skip(kpath, depth+1, vtok); err != nil {
				return err
			}
			continue
		}
		seen[key] = true
		if err := member(key, kpath, vtok); err != nil {
			return err
		}
	}
	_, err := d.next()
	return err
}

// mismatch records a type mismatch and skips the value.
func (d *decoder) mismatch(t reflect.Type, path string, depth int, tok json.Token) error {
	d.probs.add(path, "must be %s, not %s", describeType(t), describeToken(tok))
	return d.skip(path, depth, tok)
}

// skip consumes the rest of the value starting with tok, refusing nesting
// deeper than limits.MaxJSONDepth.
func (d *decoder) skip(path string, depth int, tok json.Token) error {
	open := 0
	for {
		if delim, ok := tok.(json.Delim); ok {
			switch delim {
			case '{', '[':
				open++
				if depth+open-1 > limits.MaxJSONDepth {
					d.probs.add(path, "nested too deeply (at most %d levels)", limits.MaxJSONDepth)
					return errStop
				}
			default:
				open--
			}
		}
		if open == 0 {
			return nil
		}
		var err error
		if tok, err = d.next(); err != nil {
			return err
		}
	}
}

func describeType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return "a time in RFC 3339 format (e.g. 2006-01-02T15:04:05Z)"
	case stepType:
		return stepShape
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64:
		return "a number"
	}
	return t.String()
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// structFields maps the JSON names of t's fields to their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	fieldCache.Store(t, m)
	return m
}

// suggest returns " (did you mean x?)" when key is a near miss of one of
// t's fields.
func suggest(key string, t reflect.Type) string {
	best, ok := spelling.Closest(strings.ToLower(key), slices.Collect(maps.Keys(structFields(t))))
	if !ok {
		return ""
	}
	return " (did you mean " + best + "?)"
}
