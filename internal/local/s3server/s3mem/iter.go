// Copied from gofakes3 v1.2.0 (MIT License, Copyright (c) 2016 Johannes Boyne): see doc.go.

package s3mem

import (
	"io"

	"github.com/ryszard/goskiplist/skiplist"
)

// skipIter wraps goskiplist's iterator, which is a bit janky; seeking doesn't
// play nice with the iteration idiom. If you seek, then iterate using the
// examples provided in the godoc, your iteration will always skip the first
// result. It would be less error prone and astonishing if Seek meant that the
// next call to Next() would give you what you expect.
type skipIter struct {
	inner     skiplist.Iterator
	didSeek   bool
	seekWasOK bool
}

func newSkipIter(inner skiplist.Iterator) *skipIter {
	return &skipIter{inner: inner}
}

// Next returns true if the iterator contains subsequent elements
// and advances its state to the next element if that is possible.
func (iter *skipIter) Next() (ok bool) {
	if iter.didSeek {
		iter.didSeek = false
		return iter.seekWasOK
	} else {
		return iter.inner.Next()
	}
}

// Key returns the current key.
func (iter *skipIter) Key() interface{} {
	return iter.inner.Key()
}

// Value returns the current value.
func (iter *skipIter) Value() interface{} {
	return iter.inner.Value()
}

// Seek reduces iterative seek costs for searching forward into the Skip List
// by remarking the range of keys over which it has scanned before.  If the
// requested key occurs prior to the point, the Skip List will start searching
// as a safeguard.  It returns true if the key is within the known range of
// the list.
func (iter *skipIter) Seek(key interface{}) (ok bool) {
	iter.didSeek = true
	ok = iter.inner.Seek(key)
	iter.seekWasOK = ok
	return ok
}

type readerWithDummyCloser struct{ io.Reader }

func (d readerWithDummyCloser) Close() error { return nil }

type noOpReadCloser struct{}

func (d noOpReadCloser) Read(b []byte) (n int, err error) { return 0, io.EOF }

func (d noOpReadCloser) Close() error { return nil }
