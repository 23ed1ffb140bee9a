// Command gen writes the bootstrap template, as the BootstrapStack
// synthesizes it, to infra/bootstrap/template.json (make synth).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ferryhq/ferry/infra/stacks"
)

func main() {
	out := flag.String("out", "infra/bootstrap/template.json", "file to write the bootstrap template to")
	flag.Parse()
	tmpl, err := stacks.BootstrapTemplate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, tmpl, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out)
}
