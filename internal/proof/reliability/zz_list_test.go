package reliability

import (
	"fmt"
	"os"
	"testing"
)

func TestZZList(t *testing.T) {
	sc, err := Reference("../../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sc.Bases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(os.Getenv("ZZOUT"))
	for _, s := range b.Schedules() {
		fmt.Fprintf(f, "%+v\n", s)
	}
	f.Close()
}
