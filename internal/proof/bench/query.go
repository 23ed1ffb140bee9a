package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	smithytime "github.com/aws/smithy-go/time"
)

// AWS's query protocol (awsquery), the wire format of Auto Scaling and
// Elastic Load Balancing (classic and v2): a request is a form POSTed
// with its Action and Version, each member of the input by its name
// (Names.member.1, Filters.member.1.Values.member.2, Tags.entry.1.key),
// and the answer XML, <ActionResponse><ActionResult>...</ActionResult>
// <ResponseMetadata><RequestId>, lists as <member> elements, or an
// <ErrorResponse>. The SDK's own serializers and deserializers
// (serializers.go, deserializers.go of each service) name a member as its
// Go field is named, but for the exceptions in queryNames; timestamps are
// ISO 8601 date-times (smithy-go's time.FormatDateTime).

// queryName is how a member of a struct is named on the wire: its
// element, and the element of each item when it is a list.
type queryName struct{ elem, item string }

// queryNames are the members whose wire names are not their Go field's
// name and "member" (Auto Scaling's serializers.go and deserializers.go:
// CpuPerformanceFactorRequest's References is <Reference><item>).
var queryNames = map[string]queryName{
	"CpuPerformanceFactorRequest.References": {elem: "Reference", item: "item"},
}

var timeType = reflect.TypeOf(time.Time{})

// wireFields are the members of a struct type t with their wire names:
// its exported fields but the SDK's bookkeeping (ResultMetadata,
// noSmithyDocumentSerde).
func wireFields(t reflect.Type) []wireField {
	var fields []wireField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "ResultMetadata" {
			continue
		}
		n, ok := queryNames[t.Name()+"."+f.Name]
		if !ok {
			n = queryName{elem: f.Name, item: "member"}
		}
		fields = append(fields, wireField{index: i, queryName: n})
	}
	return fields
}

type wireField struct {
	index int
	queryName
}

// formDecoder decodes an awsquery form into an operation's input,
// remembering the keys it used.
type formDecoder struct {
	form url.Values
	used map[string]bool
}

// decodeForm decodes form (its Action and Version aside) into in, a
// pointer to an SDK input struct. A key that names no member of the
// input, or a value that is not of its member's type, is an error naming
// it.
func decodeForm(form url.Values, in any) error {
	d := &formDecoder{form: form, used: map[string]bool{"Action": true, "Version": true}}
	if err := d.value(reflect.ValueOf(in).Elem(), "", "member"); err != nil {
		return err
	}
	for k := range form {
		if !d.used[k] {
			return fmt.Errorf("the parameter %s is not a member of %s", k, reflect.TypeOf(in).Elem().Name())
		}
	}
	return nil
}

// has says whether the form holds key or a key below it.
func (d *formDecoder) has(key string) bool {
	if _, ok := d.form[key]; ok {
		return true
	}
	for k := range d.form {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// value decodes the member at key (the input itself at "") into v; item
// names a list's items.
func (d *formDecoder) value(v reflect.Value, key, item string) error {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer:
		if !d.has(key) {
			return nil
		}
		p := reflect.New(t.Elem())
		if err := d.value(p.Elem(), key, item); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case t == timeType || t.Kind() != reflect.Struct && t.Kind() != reflect.Slice && t.Kind() != reflect.Map:
		s, ok := d.form[key]
		if !ok {
			return nil
		}
		d.used[key] = true
		return setScalar(v, key, s[0])
	case t.Kind() == reflect.Struct:
		for _, f := range wireFields(t) {
			if err := d.value(v.Field(f.index), join(key, f.elem), f.item); err != nil {
				return err
			}
		}
		return nil
	case t.Kind() == reflect.Slice:
		return d.list(v, key, item)
	default:
		return d.entries(v, key)
	}
}

// list decodes the list at key: key.item.1, key.item.2, ... ; key= alone
// is an empty list.
func (d *formDecoder) list(v reflect.Value, key, item string) error {
	if s, ok := d.form[key]; ok && len(s) == 1 && s[0] == "" {
		d.used[key] = true
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		return nil
	}
	for i := 1; d.has(join(key, item, strconv.Itoa(i))); i++ {
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(e, join(key, item, strconv.Itoa(i)), "member"); err != nil {
			return err
		}
		v.Set(reflect.Append(v, e))
	}
	return nil
}

// entries decodes the map at key: key.entry.N.key and key.entry.N.value.
func (d *formDecoder) entries(v reflect.Value, key string) error {
	for i := 1; d.has(join(key, "entry", strconv.Itoa(i))); i++ {
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(k, join(key, "entry", strconv.Itoa(i), "key"), "member"); err != nil {
			return err
		}
		if err := d.value(e, join(key, "entry", strconv.Itoa(i), "value"), "member"); err != nil {
			return err
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		v.SetMapIndex(k, e)
	}
	return nil
}

func join(parts ...string) string {
	parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
	return strings.Join(parts, ".")
}

// setScalar sets v, a string, bool, number or time, from its text s.
func setScalar(v reflect.Value, key, s string) error {
	var err error
	switch {
	case v.Type() == timeType:
		var t time.Time
		if t, err = smithytime.ParseDateTime(s); err == nil {
			v.Set(reflect.ValueOf(t))
		}
	case v.Kind() == reflect.String:
		v.SetString(s)
	case v.Kind() == reflect.Bool:
		var b bool
		if b, err = strconv.ParseBool(s); err == nil {
			v.SetBool(b)
		}
	case v.CanInt():
		var n int64
		if n, err = strconv.ParseInt(s, 10, v.Type().Bits()); err == nil {
			v.SetInt(n)
		}
	case v.CanFloat():
		var f float64
		if f, err = strconv.ParseFloat(s, v.Type().Bits()); err == nil {
			v.SetFloat(f)
		}
	default:
		return fmt.Errorf("the parameter %s is of a type the query protocol does not carry (%s)", key, v.Type())
	}
	if err != nil {
		return fmt.Errorf("the parameter %s: %q is not a %s", key, s, v.Type())
	}
	return nil
}

// encodeResult writes the answer of action with out, a pointer to an SDK
// output struct, as AWS writes it in namespace xmlns.
func encodeResult(b *bytes.Buffer, action, xmlns, requestID string, out any) {
	fmt.Fprintf(b, `<%sResponse xmlns="%s"><%sResult>`, action, xmlns, action)
	encodeStruct(b, reflect.ValueOf(out).Elem())
	fmt.Fprintf(b, `</%sResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>`, action, requestID, action)
}

// encodeError writes an error as AWS's query protocol answers one: its
// type (Sender, the caller's fault, or Receiver), code and message.
func encodeError(b *bytes.Buffer, xmlns, requestID, code, message string, receiver bool) {
	kind := "Sender"
	if receiver {
		kind = "Receiver"
	}
	fmt.Fprintf(b, `<ErrorResponse xmlns="%s"><Error><Type>%s</Type><Code>`, xmlns, kind)
	escape(b, code)
	b.WriteString(`</Code><Message>`)
	escape(b, message)
	fmt.Fprintf(b, `</Message></Error><RequestId>%s</RequestId></ErrorResponse>`, requestID)
}

func escape(b *bytes.Buffer, s string) { _ = xml.EscapeText(b, []byte(s)) }

// encodeStruct writes the members of the struct v, each as an element,
// but for a nil pointer, list or map and an empty enum.
func encodeStruct(b *bytes.Buffer, v reflect.Value) {
	for _, f := range wireFields(v.Type()) {
		fv := v.Field(f.index)
		if (fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil() ||
			fv.Kind() == reflect.String && fv.Len() == 0 {
			continue
		}
		encodeElement(b, f.elem, f.item, fv)
	}
}

// encodeElement writes v as the element name; item names a list's items.
func encodeElement(b *bytes.Buffer, name, item string, v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	fmt.Fprintf(b, "<%s>", name)
	switch {
	case v.Type() == timeType:
		b.WriteString(smithytime.FormatDateTime(v.Interface().(time.Time)))
	case v.Kind() == reflect.Struct:
		encodeStruct(b, v)
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			encodeElement(b, item, "member", v.Index(i))
		}
	case v.Kind() == reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			b.WriteString("<entry>")
			encodeElement(b, "key", "member", iter.Key())
			encodeElement(b, "value", "member", iter.Value())
			b.WriteString("</entry>")
		}
	case v.Kind() == reflect.String:
		escape(b, v.String())
	case v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, v.Type().Bits()))
	default:
		fmt.Fprint(b, v.Interface())
	}
	fmt.Fprintf(b, "</%s>", name)
}
