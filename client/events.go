package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/events"
)

// schemaVersion is the version of ferry's --json output, the
// schema_version of every object it prints and of every deploy event's
// detail (one schema, ferry schema events, holds both). It goes up when a
// key is removed or renamed or changes meaning; a new kind of event, or a
// new key, keeps it.
const schemaVersion = events.Version

// eventsSchemaID is the $id of the schema of ferry's --json output
// (ferry schema events).
const eventsSchemaID = "https://github.com/ferryhq/ferry/schema/events.json"

// eventKind is one kind of JSON object ferry prints under --json: an event
// of a stream (one object a line) or a command's result (one indented
// object). Every object starts with "schema_version" and "event" (the
// kind's name); its other keys are body's, the struct type the kind is
// written from, which its definition in the schema is made from.
type eventKind struct {
	name  string
	about string
	body  reflect.Type
	// keys, when set, describe the kind's own keys instead of the
	// keyDocs of eventsSchema (a deploy event's: events.KeyDocs).
	keys map[string]string
}

// kindOf is the eventKind name whose body is T, a struct type.
func kindOf[T any](name, about string) eventKind {
	return eventKind{name: name, about: about, body: reflect.TypeFor[T]()}
}

// writeEvent writes body as an object of kind k on w, one line, or
// indented by two spaces when indent is set. A body of another type than
// k's is a bug in ferry: it panics, and the command reports an internal
// error.
func writeEvent(w io.Writer, k eventKind, body any, indent bool) error {
	if t := reflect.TypeOf(body); t != k.body {
		panic(fmt.Sprintf("event %s written from a %v, not a %v", k.name, t, k.body))
	}
	raw, err := marshalNoEscape(body)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"schema_version":%d,"event":%q`, schemaVersion, k.name)
	if rest := bytes.TrimPrefix(raw, []byte("{")); !bytes.HasPrefix(rest, []byte("}")) {
		b.WriteByte(',')
		b.Write(rest)
	} else {
		b.WriteByte('}')
	}
	if indent {
		var ind bytes.Buffer
		if err := json.Indent(&ind, b.Bytes(), "", "  "); err != nil {
			return err
		}
		b = ind
	}
	b.WriteByte('\n')
	_, _ = w.Write(b.Bytes()) // a failed write on stdout has nowhere better to go
	return nil
}

// marshalNoEscape is v as compact JSON, HTML characters unescaped.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// eventsSchema is the JSON Schema (draft 2020-12) of every object ferry
// prints under --json: one definition per kind in $defs, made from its
// Go type, and the kind picked by "event". A key without omitempty is
// required and never null unless its type is a pointer; an array is never
// null; no key outside the definition is allowed. A kind added to kinds
// (an EventBridge detail, say) is one more definition. keyDocs describes
// an object's own keys by name. The result is
// indented JSON ending with a newline.
func eventsSchema(kinds []eventKind, keyDocs map[string]string) []byte {
	defs := obj{}
	var names []string
	var pick []any
	for _, k := range kinds {
		names = append(names, k.name)
		def := typeSchema(k.body, nil)
		if k.keys != nil {
			describeKeys(def, k.keys)
		} else {
			describeKeys(def, keyDocs)
		}
		props := obj{
			"schema_version": obj{"const": schemaVersion, "description": "The version of this schema."},
			"event":          obj{"const": k.name},
		}
		for key, v := range def["properties"].(obj) {
			props[key] = v
		}
		def["properties"] = props
		def["required"] = slices.Concat([]string{"schema_version", "event"}, def["required"].([]string))
		def["description"] = k.about
		defs[k.name] = def
		pick = append(pick, obj{
			"if":   obj{"properties": obj{"event": obj{"const": k.name}}, "required": []string{"event"}},
			"then": obj{"$ref": "#/$defs/" + k.name},
		})
	}
	schema := obj{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     eventsSchemaID,
		"title":   "ferry --json output",
		"description": "Every object ferry prints under --json: the events of a deploy it follows, one a line, " +
			"and each command's result; and the detail of every deploy event the deployer puts on EventBridge (source \"ferry\"). \"event\" names its kind, \"schema_version\" the version of this schema " +
			"(it goes up when a key is removed or changes meaning; new kinds and keys keep it).",
		"type":       "object",
		"required":   []string{"schema_version", "event"},
		"properties": obj{"schema_version": obj{"const": schemaVersion}, "event": obj{"enum": names}},
		"allOf":      pick,
		"$defs":      defs,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(schema) // maps, strings and numbers: it cannot fail
	return b.Bytes()
}

type obj = map[string]any

// describeKeys gives each property of the object schema s (its own, not
// those of objects within it, where a key may mean something else) whose
// key docs has the description docs says.
func describeKeys(s obj, docs map[string]string) {
	props, _ := s["properties"].(obj)
	for key, p := range props {
		if ps, ok := p.(obj); ok && docs[key] != "" {
			ps["description"] = docs[key]
		}
	}
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// typeSchema is the schema of the JSON encoding/json makes of a t. seen
// are the struct types being described (a type within itself is any
// value). A type with its own MarshalJSON is any value, but time.Time (a
// date-time string).
func typeSchema(t reflect.Type, seen []reflect.Type) obj {
	switch {
	case t == timeType:
		return obj{"type": "string", "format": "date-time"}
	case t == rawType:
		return obj{}
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return obj{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return obj{"anyOf": []any{typeSchema(t.Elem(), seen), obj{"type": "null"}}}
	case reflect.Bool:
		return obj{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return obj{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return obj{"type": "number"}
	case reflect.String:
		return obj{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return obj{"type": "string", "contentEncoding": "base64"}
		}
		return obj{"type": "array", "items": typeSchema(t.Elem(), seen)}
	case reflect.Map:
		return obj{"type": "object", "additionalProperties": typeSchema(t.Elem(), seen)}
	case reflect.Struct:
		if slices.Contains(seen, t) {
			return obj{}
		}
		return structSchema(t, append(seen, t))
	}
	return obj{}
}

// structSchema is the schema of a struct type's JSON object: its fields
// by their json names, embedded structs' fields flattened, those without
// omitempty or omitzero required, no others allowed.
func structSchema(t reflect.Type, seen []reflect.Type) obj {
	props := obj{}
	required := []string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" || !f.IsExported() && !f.Anonymous {
				continue
			}
			if ft := f.Type; f.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			props[name] = typeSchema(f.Type, seen)
			if !slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" }) {
				required = append(required, name)
			}
		}
	}
	walk(t)
	return obj{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}
