// Package textpos owns positions in a text: the line and column, counted
// as people and editors count them, of a byte offset a decoder reports,
// and how ferry writes them ("line 3, column 7", or "FILE:3:7"). It is
// pure: no I/O.
package textpos
